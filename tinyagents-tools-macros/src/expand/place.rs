//! Where a free `#[tool]` fn sits, asked of the compiler. An attribute sees
//! its item only: a fn of an `impl` block or a trait that names neither
//! `self` nor `Self` looks like a free fn. The tool type is a module item,
//! so the fn's body gets a check that holds only where the tool type is in
//! scope as the fn's sibling:
//!
//! ```text
//! fn weather(args: WeatherArgs) -> String {
//!     fn check() {
//!         let WeatherTool = loop {};
//!         tool_macro::module_item(WeatherTool);
//!     }
//!     ...
//! }
//! ```
//!
//! Beside a free fn, `WeatherTool` names the unit struct `#[tool]` made, so
//! the `let` is a pattern of that type and the tool type implements
//! `ModuleItem`. In an `impl` block or a trait no tool type is made there
//! (the compiler refuses a struct in that place), so `WeatherTool` is a new
//! binding of the never type, which does not implement `ModuleItem`: its
//! `#[diagnostic::on_unimplemented]` message then says where `#[tool]`
//! goes. The check is a nested fn nobody calls: it costs nothing at run
//! time.

use proc_macro2::TokenStream;
use quote::quote;

/// `item` with the check above as the first item of its body.
pub(super) fn checked(item: &syn::ItemFn, tool: &syn::Ident, krate: &syn::Path) -> syn::ItemFn {
    let mut item = item.clone();
    let check: syn::Stmt = syn::parse_quote! {
        #[allow(dead_code, unreachable_code, non_snake_case)]
        fn __tinyagents_module_item() {
            let #tool = loop {};
            #krate::tool_macro::module_item(#tool);
        }
    };
    item.block.stmts.insert(0, check);
    item
}

/// The tool type's `ModuleItem` impl: the check's answer for a free fn.
pub(super) fn module_item(tool: &syn::Ident, krate: &syn::Path) -> TokenStream {
    quote! {
        #[diagnostic::do_not_recommend]
        impl #krate::tool_macro::ModuleItem for #tool {}
    }
}
