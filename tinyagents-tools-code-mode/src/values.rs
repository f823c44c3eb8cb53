//! Values across the engine's boundary, walked rather than written out:
//! a program's arguments become a `serde_json::Value` and a tool's answer
//! a JavaScript value, with no JSON text in between. The result is the
//! value that `JSON.stringify` in the program and a JSON parser on the
//! other side would give; what the walk does not take in itself (a
//! `toJSON`, a class instance, a function, a `BigInt`, a proxy, nesting
//! deeper than [`MAX_WALK_DEPTH`]) goes through the engine's own
//! `JSON.stringify`, and what JSON text would not carry at all (a string
//! that is not Unicode, arguments too large for the engine's heap) is
//! handed over as that text, for the executor to refuse as it refuses any
//! provider's.

use rquickjs::atom::PredefinedAtom;
use rquickjs::object::{Filter, Property};
use rquickjs::{Array, Ctx, Object, String as JsString, Value as Js};
use serde_json::{Map, Number, Value};

use tinyagents_tools::call::RawArguments;

/// How deep either walk goes (it recurses on the program's thread, whose
/// stack the engine's limit also counts); a deeper part is handed to the
/// engine's JSON functions, which check that limit as they go.
pub(crate) const MAX_WALK_DEPTH: usize = 8;

/// Why the walk stopped.
enum Stop {
    /// The engine threw (a getter, `toJSON`, `JSON.stringify` itself, out
    /// of memory): the program gets the exception, as from
    /// `JSON.stringify`.
    Thrown(rquickjs::Error),
    /// JSON text would not carry the value faithfully: hand the executor
    /// the text, as the program's `JSON.stringify` writes it.
    AsText,
}

impl From<rquickjs::Error> for Stop {
    fn from(e: rquickjs::Error) -> Self {
        Stop::Thrown(e)
    }
}

/// The arguments `value` as a call carries them: `{}` for `undefined`,
/// otherwise what `JSON.stringify(value)` would send. At most `budget`
/// bytes of JSON text are walked; larger arguments are written out by the
/// engine (within its heap limit) for the executor to bound.
pub(crate) fn arguments<'js>(
    ctx: &Ctx<'js>,
    value: &Js<'js>,
    budget: usize,
) -> rquickjs::Result<RawArguments> {
    if value.is_undefined() {
        return Ok(RawArguments::Json(Value::Object(Map::new())));
    }
    let mut walk = Walk { ctx, budget };
    match walk.value(value, Key::Root, 0) {
        Ok(Some(json)) => Ok(RawArguments::Json(json)),
        Ok(None) => Err(not_json(ctx)),
        Err(Stop::Thrown(e)) => Err(e),
        Err(Stop::AsText) => match ctx.json_stringify(value.clone())? {
            Some(text) => Ok(RawArguments::Text(text.to_string()?)),
            None => Err(not_json(ctx)),
        },
    }
}

/// The exception for arguments that are not a JSON value at all (a
/// function, a symbol).
fn not_json(ctx: &Ctx<'_>) -> rquickjs::Error {
    rquickjs::Exception::throw_type(ctx, "a tool's arguments must be a JSON value")
}

/// Where a value sits in its holder: the key `JSON.stringify` passes to a
/// `toJSON`.
#[derive(Clone, Copy)]
enum Key<'a, 'js> {
    /// The arguments themselves (key `""`).
    Root,
    /// A member of an object.
    Member(&'a JsString<'js>),
    /// An element of an array.
    Index(u32),
}

struct Walk<'a, 'js> {
    ctx: &'a Ctx<'js>,
    /// Bytes of JSON text left before the walk gives up.
    budget: usize,
}

impl<'js> Walk<'_, 'js> {
    /// Spends `n` bytes of the budget.
    fn spend(&mut self, n: usize) -> Result<(), Stop> {
        self.budget = self.budget.checked_sub(n).ok_or(Stop::AsText)?;
        Ok(())
    }

    /// `value` as JSON; `None` where `JSON.stringify` gives `undefined`
    /// (a member left out, an element written `null`). The primitive
    /// types are read from the value's tag; an object is classified once.
    fn value(
        &mut self,
        value: &Js<'js>,
        key: Key<'_, 'js>,
        depth: usize,
    ) -> Result<Option<Value>, Stop> {
        if let Some(i) = value.as_int() {
            self.spend(11)?;
            return Ok(Some(Value::from(i)));
        }
        if let Some(f) = value.as_float() {
            self.spend(24)?;
            return Ok(Some(number(f)));
        }
        if value.is_string() {
            let s = value.as_string().map(JsString::to_string);
            let s = s.and_then(Result::ok).ok_or(Stop::AsText)?;
            self.spend(s.len() + 2)?;
            return Ok(Some(Value::String(s)));
        }
        if let Some(b) = value.as_bool() {
            self.spend(5)?;
            return Ok(Some(Value::Bool(b)));
        }
        if value.is_null() {
            self.spend(4)?;
            return Ok(Some(Value::Null));
        }
        if value.is_undefined() || value.is_symbol() {
            return Ok(None);
        }
        if !value.is_object() || depth >= MAX_WALK_DEPTH {
            // A BigInt, or a part too deep for the walk: as the engine
            // writes it.
            return self.engine(value, key);
        }
        let Some(object) = value.as_object() else {
            return self.engine(value, key);
        };
        if value.is_function() || value.is_proxy() {
            return self.engine(value, key);
        }
        if object.contains_key(PredefinedAtom::ToJSON)? {
            return self.engine(value, key);
        }
        if value.is_array() {
            let array = value.as_array().ok_or(Stop::AsText)?;
            return self.array(array, depth).map(Some);
        }
        if !plain(object) {
            return self.engine(value, key);
        }
        self.object(object, depth).map(Some)
    }

    fn array(&mut self, array: &Array<'js>, depth: usize) -> Result<Value, Stop> {
        // Not `Array::len`, which expects a length that is a small integer.
        let len: f64 = array.as_object().get(PredefinedAtom::Length)?;
        // Each element takes at least a byte (its comma); a sparse array
        // longer than the budget is written by the engine, within its heap.
        if len > self.budget as f64 {
            return Err(Stop::AsText);
        }
        self.spend(2)?;
        let len = len as usize;
        let mut items = Vec::with_capacity(len.min(1024));
        for i in 0..len {
            self.spend(1)?;
            let item: Js<'js> = array.get(i)?;
            let key = Key::Index(i as u32);
            items.push(self.value(&item, key, depth + 1)?.unwrap_or(Value::Null));
        }
        Ok(Value::Array(items))
    }

    fn object(&mut self, object: &Object<'js>, depth: usize) -> Result<Value, Stop> {
        self.spend(2)?;
        let mut map = Map::new();
        for entry in object.own_props::<JsString<'js>, Js<'js>>(Filter::default()) {
            let (key, item) = entry?;
            if let Some(item) = self.value(&item, Key::Member(&key), depth + 1)? {
                let key = key.to_string().map_err(|_| Stop::AsText)?;
                self.spend(key.len() + 4)?;
                map.insert(key, item);
            }
        }
        Ok(Value::Object(map))
    }

    /// A part the walk does not take in itself, through the engine's
    /// `JSON.stringify` (which calls `toJSON` with the part's key, unwraps
    /// boxed primitives, leaves out functions and throws on cycles and
    /// `BigInt`s): written as the one member of a holder without a
    /// prototype, under its key, and read back.
    fn engine(&mut self, value: &Js<'js>, key: Key<'_, 'js>) -> Result<Option<Value>, Stop> {
        let holder = Object::new_proto(self.ctx.clone(), None)?;
        match key {
            Key::Root => holder.set("", value.clone())?,
            Key::Member(name) => holder.set(name.clone(), value.clone())?,
            Key::Index(i) => holder.set(i, value.clone())?,
        }
        let Some(text) = self.ctx.json_stringify(holder)? else {
            return Ok(None);
        };
        let text = text.to_string().map_err(|_| Stop::AsText)?;
        self.spend(text.len())?;
        match serde_json::from_str(&text) {
            Ok(Value::Object(member)) => Ok(member.into_iter().next().map(|(_, v)| v)),
            _ => Err(Stop::AsText),
        }
    }
}

/// Whether `JSON.stringify` writes `object` as its own enumerable members,
/// as the walk does: an object whose prototype has none itself
/// (`Object.prototype`, or one made by `Object.create(null)`). Anything
/// else goes to the engine: an object without a prototype may be a
/// `JSON.rawJSON` value, and a boxed `Number`, `String`, `Boolean` or
/// `BigInt`, a `Map`, an `Error` or an instance of a class has a prototype
/// that has one. (A boxed primitive whose prototype the program set to
/// `Object.prototype` is walked as an object.)
fn plain(object: &Object<'_>) -> bool {
    match object.get_prototype() {
        Some(proto) => !proto.as_value().is_proxy() && proto.get_prototype().is_none(),
        None => false,
    }
}

/// A JavaScript number as JSON text would carry it to a parser: `null`
/// when not finite, an integer when it is one (as `JSON.stringify` writes
/// it without a fraction), otherwise the number.
pub(crate) fn number(f: f64) -> Value {
    if !f.is_finite() {
        return Value::Null;
    }
    if f.fract() == 0.0 {
        // Exact: an integral f64 in these ranges converts without loss.
        if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
            return Value::from(f as u64);
        }
        if (-9_223_372_036_854_775_808.0..0.0).contains(&f) {
            return Value::from(f as i64);
        }
    }
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// A tool's answer as the program receives it: what `JSON.parse` of its
/// JSON text would give. Members are set on fresh objects and arrays (a
/// setter the program put on `Object.prototype` or `Array.prototype` sees
/// them, as it would its own assignments); `__proto__` is defined as a
/// member, as `JSON.parse` does, never the prototype.
pub(crate) fn to_js<'js>(ctx: &Ctx<'js>, value: &Value, depth: usize) -> rquickjs::Result<Js<'js>> {
    Ok(match value {
        Value::Null => Js::new_null(ctx.clone()),
        Value::Bool(b) => Js::new_bool(ctx.clone(), *b),
        Value::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) => Js::new_int(ctx.clone(), i),
            None => Js::new_number(ctx.clone(), n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => JsString::from_str(ctx.clone(), s)?.into_value(),
        _ if depth >= MAX_WALK_DEPTH => ctx.json_parse(value.to_string())?,
        Value::Array(items) => {
            let array = Array::new(ctx.clone())?;
            for (i, item) in items.iter().enumerate() {
                array.set(i, to_js(ctx, item, depth + 1)?)?;
            }
            array.into_value()
        }
        Value::Object(map) => {
            let object = Object::new(ctx.clone())?;
            for (key, item) in map {
                let item = to_js(ctx, item, depth + 1)?;
                if key == "__proto__" {
                    // A member, as `JSON.parse` makes it, not the setter
                    // of the object's prototype.
                    let member = Property::from(item).writable().enumerable().configurable();
                    object.prop(key.as_str(), member)?;
                } else {
                    object.set(key.as_str(), item)?;
                }
            }
            object.into_value()
        }
    })
}
