;; A WebAssembly tool for tinyagents_tools::wasm::WasmTool: bump allocation
;; from offset 1024; `call` answers `{"ok":<input>}`.
(module
  (memory (export "memory") 1)
  (global $next (mut i32) (i32.const 1024))
  (data (i32.const 0) "{\22ok\22:")
  (func (export "alloc") (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $next))
    (global.set $next (i32.add (global.get $next) (local.get $len)))
    (local.get $p))
  (func (export "call") (param $ptr i32) (param $len i32) (result i64)
    (local $out i32)
    (local.set $out (global.get $next))
    (memory.copy (local.get $out) (i32.const 0) (i32.const 6))
    (memory.copy (i32.add (local.get $out) (i32.const 6)) (local.get $ptr) (local.get $len))
    (i32.store8 (i32.add (local.get $out) (i32.add (i32.const 6) (local.get $len))) (i32.const 125))
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
      (i64.extend_i32_u (i32.add (local.get $len) (i32.const 7))))))
