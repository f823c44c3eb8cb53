//! WASM tools: a WebAssembly module that exports a JSON-in, JSON-out
//! function, run in the [wasmi](https://docs.rs/wasmi) interpreter with a
//! fuel limit and a memory limit per call (cargo feature `wasm`).
//!
//! Every call gets a fresh store and instance: no global, memory or table
//! state survives from one call to the next. Running out of fuel or memory
//! stops the call with a classified `resource_exhausted` error; a trap is a
//! `crashed` error; the next call starts clean.
//!
//! # The module's ABI
//!
//! The module imports nothing and exports:
//! - `memory`: its linear memory;
//! - `alloc(len: i32) -> i32`: space for `len` bytes of input, returning
//!   its offset;
//! - `call(ptr: i32, len: i32) -> i64`: runs the tool on the UTF-8 JSON
//!   arguments at `ptr..ptr+len` and returns where its output is, as
//!   `(out_ptr << 32) | out_len`.
//!
//! The output is a UTF-8 JSON document, either `{"ok": <value>}` (the
//! structured result) or `{"err": "<message>"}` (a repairable error the
//! model reads). Anything else is a fatal error.
//!
//! ```
//! use tinyagents_tools::wasm::WasmTool;
//! use tinyagents_tools::{ToolSafety, ToolSpec};
//!
//! // Answers `{"ok":42}` whatever it is asked.
//! let wat = r#"(module
//!   (memory (export "memory") 1)
//!   (data (i32.const 0) "{\22ok\22:42}")
//!   (func (export "alloc") (param i32) (result i32) (i32.const 1024))
//!   (func (export "call") (param i32 i32) (result i64) (i64.const 9)))"#;
//! # let wasm = wat::parse_str(wat).unwrap();
//! let spec = ToolSpec::builder("answer", "The answer.").safety(ToolSafety::pure()).fuel(10_000);
//! let tool = WasmTool::new(spec.build()?, &wasm)?;
//! assert_eq!(tool.run(&serde_json::json!({}))?.structured, Some(serde_json::json!(42)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use async_trait::async_trait;
use serde_json::Value;
use wasmi::errors::{ErrorKind as EngineError, FuelError, MemoryError};
use wasmi::{
    Config, Engine, Instance, Linker, Memory, Module, Store, StoreLimits, StoreLimitsBuilder,
    TrapCode, TypedFunc,
};

use crate::error::ToolError;
use crate::output::ToolOutput;
use crate::runtime::ToolRuntime;
use crate::spec::{ResourceBounds, ToolSpec};
use crate::tool::CallResult;
use crate::tool::Shared;
use crate::tool::Tool;

/// The fuel a call gets when the spec sets none (about ten million
/// instructions).
pub const DEFAULT_FUEL: u64 = 10_000_000;
/// The linear memory a call may grow to when the spec sets none (16 MiB).
pub const DEFAULT_MAX_MEMORY: u64 = 16 << 20;

/// Why a module cannot be a tool.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WasmError {
    /// The bytes are not a valid WebAssembly module.
    #[error("the module is not valid WebAssembly: {0}")]
    Invalid(wasmi::Error),
    /// The module imports something (a tool module must import nothing).
    #[error("the module imports `{0}`: a tool module must import nothing")]
    Imports(String),
    /// The module could not be instantiated within its bounds (its initial
    /// memory is over the limit, or its start function failed).
    #[error("the module cannot be instantiated within its bounds: {0}")]
    Instantiate(wasmi::Error),
    /// An export of the ABI is missing or has the wrong type.
    #[error("the module does not export `{0}` as the tool ABI requires")]
    MissingExport(&'static str),
}

/// A tool whose body is a WebAssembly module (see the [module](self) docs
/// for its ABI).
///
/// Its spec's [`fuel`](ResourceBounds::fuel) and
/// [`max_memory`](ResourceBounds::max_memory) bound each call; when unset,
/// [`DEFAULT_FUEL`] and [`DEFAULT_MAX_MEMORY`] apply and are written into the
/// spec, so exports and events show the bounds that hold.
#[derive(Debug, Clone)]
pub struct WasmTool {
    spec: ToolSpec,
    runner: Runner,
}

/// What a call needs, cheap to clone onto the blocking pool.
#[derive(Debug, Clone)]
struct Runner {
    engine: Engine,
    module: Module,
    fuel: u64,
    max_memory: u64,
}

/// What one call's store holds: its limits.
struct CallData {
    limits: StoreLimits,
}

/// The ABI's exports in one instance.
struct Exports {
    memory: Memory,
    alloc: TypedFunc<i32, i32>,
    call: TypedFunc<(i32, i32), i64>,
}

impl WasmTool {
    /// A tool running `wasm` (module bytes) under `spec`. The module is
    /// validated and compiled once; every export of the ABI is checked.
    pub fn new(mut spec: ToolSpec, wasm: &[u8]) -> Result<Self, WasmError> {
        let mut config = Config::default();
        config.consume_fuel(true);
        let engine = Engine::new(&config);
        let module = Module::new(&engine, wasm).map_err(WasmError::Invalid)?;
        if let Some(import) = module.imports().next() {
            return Err(WasmError::Imports(format!(
                "{}::{}",
                import.module(),
                import.name()
            )));
        }
        spec.bounds = ResourceBounds {
            fuel: Some(spec.bounds.fuel.unwrap_or(DEFAULT_FUEL)),
            max_memory: Some(spec.bounds.max_memory.unwrap_or(DEFAULT_MAX_MEMORY)),
            ..spec.bounds
        };
        let runner = Runner {
            engine,
            module,
            fuel: spec.bounds.fuel.unwrap_or(DEFAULT_FUEL),
            max_memory: spec.bounds.max_memory.unwrap_or(DEFAULT_MAX_MEMORY),
        };
        let (mut store, instance) = runner.instantiate().map_err(WasmError::Instantiate)?;
        exports(&mut store, &instance)?;
        Ok(WasmTool { spec, runner })
    }

    /// Runs one call synchronously, in a fresh instance: what
    /// [`Tool::call`] does on the blocking pool.
    pub fn run(&self, arguments: &Value) -> CallResult {
        self.runner.run(arguments)
    }
}

impl Runner {
    fn fuel(&self) -> u64 {
        self.fuel
    }

    fn max_memory(&self) -> u64 {
        self.max_memory
    }

    /// A fresh store with this call's fuel and memory limit, and a fresh
    /// instance in it.
    fn instantiate(&self) -> Result<(Store<CallData>, Instance), wasmi::Error> {
        let limits = StoreLimitsBuilder::new()
            .memory_size(usize::try_from(self.max_memory()).unwrap_or(usize::MAX))
            .trap_on_grow_failure(true)
            .build();
        let mut store = Store::new(&self.engine, CallData { limits });
        store.limiter(|data| &mut data.limits);
        store.set_fuel(self.fuel())?;
        let instance = Linker::<CallData>::new(&self.engine)
            .instantiate_and_start(&mut store, &self.module)?;
        Ok((store, instance))
    }

    fn run(&self, arguments: &Value) -> CallResult {
        let input = serde_json::to_vec(arguments)?;
        let (mut store, instance) = self.instantiate().map_err(|e| self.classify(&e))?;
        let abi = exports(&mut store, &instance).map_err(|_| malformed())?;
        let len = i32::try_from(input.len()).map_err(|_| {
            ToolError::resource_exhausted("memory", format_args!("{} bytes", self.max_memory()))
        })?;
        let ptr = abi
            .alloc
            .call(&mut store, len)
            .map_err(|e| self.classify(&e))?;
        abi.memory
            .write(
                &mut store,
                usize::try_from(ptr).map_err(|_| malformed())?,
                &input,
            )
            .map_err(|_| malformed())?;
        let packed = abi
            .call
            .call(&mut store, (ptr, len))
            .map_err(|e| self.classify(&e))?;
        let (out_ptr, out_len) = (
            (packed as u64 >> 32) as usize,
            (packed as u64 & 0xffff_ffff) as usize,
        );
        let data = abi.memory.data(&store);
        let output = out_ptr
            .checked_add(out_len)
            .and_then(|end| data.get(out_ptr..end))
            .ok_or_else(malformed)?;
        match serde_json::from_slice::<Value>(output).map_err(|_| malformed())? {
            Value::Object(mut map) if map.len() == 1 => {
                if let Some(value) = map.remove("ok") {
                    Ok(ToolOutput::structured(value))
                } else if let Some(Value::String(message)) = map.remove("err") {
                    Err(ToolError::repair(message))
                } else {
                    Err(malformed())
                }
            }
            _ => Err(malformed()),
        }
    }

    /// An engine error as a classified tool error.
    fn classify(&self, error: &wasmi::Error) -> ToolError {
        let fuel = || ToolError::resource_exhausted("fuel", self.fuel());
        let memory = || {
            ToolError::resource_exhausted("memory", format_args!("{} MiB", self.max_memory() >> 20))
        };
        match error.as_trap_code() {
            Some(TrapCode::OutOfFuel) => return fuel(),
            Some(TrapCode::GrowthOperationLimited) => return memory(),
            _ => {}
        }
        match error.kind() {
            EngineError::Fuel(FuelError::OutOfFuel { .. })
            | EngineError::Memory(MemoryError::OutOfFuel { .. }) => fuel(),
            EngineError::Memory(
                MemoryError::ResourceLimiterDeniedAllocation | MemoryError::OutOfBoundsGrowth,
            ) => memory(),
            _ => ToolError::crashed(),
        }
    }
}

fn malformed() -> ToolError {
    ToolError::fatal("the WASM tool returned malformed output")
}

fn exports(store: &mut Store<CallData>, instance: &Instance) -> Result<Exports, WasmError> {
    Ok(Exports {
        memory: instance
            .get_memory(&*store, "memory")
            .ok_or(WasmError::MissingExport("memory"))?,
        alloc: instance
            .get_typed_func(&*store, "alloc")
            .map_err(|_| WasmError::MissingExport("alloc"))?,
        call: instance
            .get_typed_func(&*store, "call")
            .map_err(|_| WasmError::MissingExport("call"))?,
    })
}

#[async_trait]
impl<S: Shared, C: Shared> Tool<S, C> for WasmTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, _: &S, _: &ToolRuntime<C>, arguments: Value) -> CallResult {
        let runner = self.runner.clone();
        match tokio::task::spawn_blocking(move || runner.run(&arguments)).await {
            Ok(result) => result,
            Err(_) => Err(ToolError::panicked()),
        }
    }
}
