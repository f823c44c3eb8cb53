//! The program's returned value, carried out of the engine faithfully or
//! not at all. It is walked as `JSON.stringify` walks a value (`toJSON`
//! called with its key, boxed primitives unwrapped, an object's own
//! enumerable string-keyed members in their order, a member holding
//! `undefined` left out), with one difference: where `JSON.stringify`
//! would lose something silently (write `null` for `NaN` or an
//! `undefined` element, leave out a function, write a `Map` as `{}`) or
//! throw (a cycle, a `BigInt`), the walk stops and names what and where
//! ([`Uncarried`], at a JSON Pointer). A string or key holding an unpaired
//! surrogate, which JSON text escapes but no JSON parser takes back, is
//! refused too, and so is nesting deeper than [`MAX_RESULT_DEPTH`].

use rquickjs::atom::PredefinedAtom;
use rquickjs::function::This;
use rquickjs::object::Filter;
use rquickjs::{Array, Ctx, Function, Object, String as JsString, Value as Js};
use serde_json::{Map, Value};

use crate::error::{MAX_RESULT_DEPTH, Uncarried};
use crate::values::number;

/// Why the walk stopped.
pub(crate) enum Refused {
    /// The program's own code threw on the way (a getter, a `toJSON`, a
    /// boxed value's `valueOf`), or the engine did (out of memory, the
    /// time limit): the exception is the context's.
    Thrown,
    /// Something JSON cannot carry, at the path (a JSON Pointer).
    Uncarried(Uncarried, String),
    /// The value's JSON text would be longer than the bytes left.
    TooLarge,
}

impl From<rquickjs::Error> for Refused {
    fn from(_: rquickjs::Error) -> Self {
        Refused::Thrown
    }
}

/// The built-ins a returned value is judged against, taken before the
/// program runs (it cannot replace them for the walk).
pub(crate) struct Builtins<'js> {
    /// `Object.prototype`: where a plain object's chain ends.
    object: Object<'js>,
    /// Prototypes whose instances keep their contents in internal slots,
    /// with the kind errors name.
    opaque: Vec<(&'static str, Object<'js>)>,
    /// `Number.prototype`, `String.prototype` and `Boolean.prototype`,
    /// each with its own `valueOf`, which reads the boxed value.
    boxes: Vec<(Object<'js>, Function<'js>)>,
    /// `BigInt.prototype` (a boxed `BigInt`, and where a `BigInt`'s
    /// `toJSON` would be) and `Symbol.prototype` (a boxed symbol).
    bigint: Object<'js>,
    symbol: Object<'js>,
}

/// The constructors whose `prototype` [`Builtins::opaque`] holds, each
/// the kind errors name; the typed arrays' shared prototype and the
/// iterators' are added by [`Builtins::new`].
const OPAQUE: [&str; 12] = [
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
    "WeakRef",
    "FinalizationRegistry",
    "RegExp",
    "ArrayBuffer",
    "SharedArrayBuffer",
    "DataView",
    "DisposableStack",
    "AsyncDisposableStack",
];

impl<'js> Builtins<'js> {
    /// The built-ins, read from the context's globals: call it before the
    /// program runs (a program may replace a global, not a built-in's
    /// `prototype`, which is neither writable nor configurable).
    pub(crate) fn new(ctx: &Ctx<'js>) -> rquickjs::Result<Self> {
        let globals = ctx.globals();
        let prototype = |name: &str| {
            globals
                .get::<_, Object<'js>>(name)?
                .get::<_, Object<'js>>(PredefinedAtom::Prototype)
        };
        let mut opaque = OPAQUE
            .iter()
            .map(|&kind| Ok((kind, prototype(kind)?)))
            .collect::<rquickjs::Result<Vec<_>>>()?;
        let typed = prototype("Int8Array")?
            .get_prototype()
            .ok_or(rquickjs::Error::Unknown)?;
        opaque.push(("typed array", typed));
        opaque.push(("iterator", prototype("Iterator")?));
        let boxes = ["Number", "String", "Boolean"]
            .iter()
            .map(|name| {
                let proto = prototype(name)?;
                let value_of = proto.get(PredefinedAtom::ValueOf)?;
                Ok((proto, value_of))
            })
            .collect::<rquickjs::Result<_>>()?;
        Ok(Builtins {
            object: prototype("Object")?,
            opaque,
            boxes,
            bigint: prototype("BigInt")?,
            symbol: prototype("Symbol")?,
        })
    }
}

/// The program's returned value as JSON, within `budget` bytes of JSON
/// text: `null` for `undefined` (a program that returns nothing).
pub(crate) fn carry<'js>(
    ctx: &Ctx<'js>,
    builtins: &Builtins<'js>,
    value: Js<'js>,
    budget: usize,
) -> Result<Value, Refused> {
    let mut walk = Walk {
        ctx,
        builtins,
        budget,
        path: Vec::new(),
        holders: Vec::new(),
    };
    Ok(walk.value(value, Key::Root)?.unwrap_or(Value::Null))
}

/// The key `JSON.stringify` passes to a `toJSON`: where the value sits.
enum Key<'js> {
    Root,
    Member(JsString<'js>),
    Index(u32),
}

/// One step of the path, for the pointer an error names.
enum Step {
    Member(String),
    Index(u32),
}

struct Walk<'a, 'js> {
    ctx: &'a Ctx<'js>,
    builtins: &'a Builtins<'js>,
    /// Bytes of JSON text left: each value spends at least its own.
    budget: usize,
    /// Where the walk is.
    path: Vec<Step>,
    /// The arrays and objects the value being walked is inside.
    holders: Vec<Object<'js>>,
}

impl<'js> Walk<'_, 'js> {
    fn spend(&mut self, n: usize) -> Result<(), Refused> {
        self.budget = self.budget.checked_sub(n).ok_or(Refused::TooLarge)?;
        Ok(())
    }

    /// The path as a JSON Pointer (RFC 6901).
    fn pointer(&self) -> String {
        let mut out = String::new();
        for step in &self.path {
            out.push('/');
            match step {
                Step::Member(key) => out.push_str(&key.replace('~', "~0").replace('/', "~1")),
                Step::Index(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }

    fn refuse<T>(&self, what: Uncarried) -> Result<T, Refused> {
        Err(Refused::Uncarried(what, self.pointer()))
    }

    /// `value` as JSON; `None` for what `JSON.stringify` leaves out as a
    /// member (`undefined`).
    fn value(&mut self, value: Js<'js>, key: Key<'js>) -> Result<Option<Value>, Refused> {
        let value = self.to_json(value, &key)?;
        if let Some(i) = value.as_int() {
            self.spend(1)?;
            return Ok(Some(Value::from(i)));
        }
        if let Some(f) = value.as_float() {
            if !f.is_finite() {
                return self.refuse(Uncarried::NonFinite);
            }
            self.spend(1)?;
            return Ok(Some(number(f)));
        }
        if let Some(s) = value.as_string() {
            return self.string(s).map(Some);
        }
        if let Some(b) = value.as_bool() {
            self.spend(4)?;
            return Ok(Some(Value::Bool(b)));
        }
        if value.is_null() {
            self.spend(4)?;
            return Ok(Some(Value::Null));
        }
        if value.is_undefined() {
            return Ok(None);
        }
        if value.is_symbol() {
            return self.refuse(Uncarried::Symbol);
        }
        if value.is_big_int() {
            return self.refuse(Uncarried::BigInt);
        }
        if value.is_function() {
            return self.refuse(Uncarried::Function);
        }
        if value.is_proxy() {
            return self.refuse(Uncarried::Proxy);
        }
        if value.is_promise() {
            return self.refuse(Uncarried::BuiltIn("Promise"));
        }
        if value.is_error() {
            return self.refuse(Uncarried::BuiltIn("Error"));
        }
        let Some(object) = value.into_object() else {
            // A value of a type JSON does not know (none is left).
            return self.refuse(Uncarried::Symbol);
        };
        if self.holders.len() >= MAX_RESULT_DEPTH {
            return self.refuse(Uncarried::TooDeep);
        }
        if self.holders.contains(&object) {
            return self.refuse(Uncarried::Cycle);
        }
        if let Some(array) = object.as_array() {
            let array = array.clone();
            self.holders.push(object);
            let items = self.array(&array);
            self.holders.pop();
            return items.map(Some);
        }
        match self.kind(&object) {
            Kind::Plain => {}
            Kind::Opaque(kind) => return self.refuse(Uncarried::BuiltIn(kind)),
            Kind::BigIntBox => return self.refuse(Uncarried::BigInt),
            Kind::SymbolBox => return self.refuse(Uncarried::Symbol),
            Kind::Box(value_of) => {
                let primitive = value_of.call((This(object),))?;
                return self.value(primitive, Key::Root);
            }
        }
        self.holders.push(object.clone());
        let members = self.object(&object);
        self.holders.pop();
        members.map(Some)
    }

    /// What `JSON.stringify` serializes in place of `value`: the result of
    /// its `toJSON`, called with its key, when it has one (an object, or a
    /// `BigInt` whose prototype was given one).
    fn to_json(&self, value: Js<'js>, key: &Key<'js>) -> Result<Js<'js>, Refused> {
        let method: Js<'js> = if let Some(object) = value.as_object() {
            object.get(PredefinedAtom::ToJSON)?
        } else if value.is_big_int() {
            self.builtins.bigint.get(PredefinedAtom::ToJSON)?
        } else {
            return Ok(value);
        };
        let Some(method) = method.into_function() else {
            return Ok(value);
        };
        let key: Js<'js> = match key {
            Key::Root => JsString::from_str(self.ctx.clone(), "")?.into_value(),
            Key::Member(name) => name.clone().into_value(),
            Key::Index(i) => JsString::from_str(self.ctx.clone(), &i.to_string())?.into_value(),
        };
        Ok(method.call((This(value), key))?)
    }

    fn string(&mut self, s: &JsString<'js>) -> Result<Value, Refused> {
        // The engine's UTF-8 keeps an unpaired surrogate as its own three
        // bytes, which are not UTF-8: the conversion fails on them alone.
        let Ok(text) = s.to_string() else {
            return self.refuse(Uncarried::LoneSurrogate);
        };
        self.spend(text.len() + 2)?;
        Ok(Value::String(text))
    }

    fn array(&mut self, array: &Array<'js>) -> Result<Value, Refused> {
        // Not `Array::len`, which expects a length that is a small integer.
        let len: f64 = array.as_object().get(PredefinedAtom::Length)?;
        // Each element takes at least a byte: an array longer than the
        // budget is too large before it is read.
        if len > self.budget as f64 {
            return Err(Refused::TooLarge);
        }
        self.spend(2)?;
        let len = len as u32;
        let mut items = Vec::with_capacity((len as usize).min(1024));
        for i in 0..len {
            self.spend(1)?;
            let item: Js<'js> = array.get(i as usize)?;
            self.path.push(Step::Index(i));
            let item = match self.value(item, Key::Index(i))? {
                Some(item) => item,
                None => return self.refuse(Uncarried::UndefinedInArray),
            };
            self.path.pop();
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn object(&mut self, object: &Object<'js>) -> Result<Value, Refused> {
        self.spend(2)?;
        let mut map = Map::new();
        for entry in object.own_props::<JsString<'js>, Js<'js>>(Filter::default()) {
            let (key, item) = entry?;
            let Ok(name) = key.to_string() else {
                return self.refuse(Uncarried::LoneSurrogateKey);
            };
            self.path.push(Step::Member(name));
            let item = self.value(item, Key::Member(key))?;
            let Some(Step::Member(name)) = self.path.pop() else {
                unreachable!("the step pushed above");
            };
            if let Some(item) = item {
                self.spend(name.len() + 4)?;
                map.insert(name, item);
            }
        }
        Ok(Value::Object(map))
    }

    /// What `object` is to `JSON.stringify`, from its prototype chain up
    /// to `Object.prototype`: an object written as its own members, an
    /// instance of a built-in whose contents live in internal slots, or a
    /// boxed primitive.
    fn kind(&self, object: &Object<'js>) -> Kind<'js> {
        let b = self.builtins;
        let mut proto = object.get_prototype();
        while let Some(p) = proto {
            if p == b.object {
                break;
            }
            if let Some((kind, _)) = b.opaque.iter().find(|(_, o)| *o == p) {
                return Kind::Opaque(kind);
            }
            if let Some((_, value_of)) = b.boxes.iter().find(|(o, _)| *o == p) {
                return Kind::Box(value_of.clone());
            }
            if p == b.bigint {
                return Kind::BigIntBox;
            }
            if p == b.symbol {
                return Kind::SymbolBox;
            }
            proto = p.get_prototype();
        }
        Kind::Plain
    }
}

/// What an object is to `JSON.stringify` ([`Walk::kind`]).
enum Kind<'js> {
    /// Written as its own enumerable string-keyed members.
    Plain,
    /// A built-in whose contents are in internal slots.
    Opaque(&'static str),
    /// A boxed `Number`, `String` or `Boolean`, with the `valueOf` that
    /// reads it (a box of a program's subclass included).
    Box(Function<'js>),
    /// A boxed `BigInt`.
    BigIntBox,
    /// A boxed symbol.
    SymbolBox,
}
