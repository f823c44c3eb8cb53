//! Secrets: values a tool may use but that must never reach the model, the
//! schema, a log line or an event.
//!
//! [`Secret<T>`] implements none of `Serialize`, `Deserialize`, `JsonSchema`
//! or `Display`, and its `Debug` shows only the type. So a secret cannot be
//! put in an argument struct (no schema, no deserializer), cannot be printed
//! by accident, and can only reach a tool through `#[inject]`.

use std::any::type_name;
use std::fmt;
use std::sync::Arc;

use crate::redact::secret_forms;
use crate::runtime::Extensions;

/// A secret value of type `T`, injected into tools from the run's
/// [`Secrets`].
///
/// ```
/// use tinyagents_tools::Secret;
/// use tinyagents_tools::runtime::Secrets;
///
/// struct GithubToken(String);
/// impl AsRef<str> for GithubToken {
///     fn as_ref(&self) -> &str { &self.0 }
/// }
///
/// let mut secrets = Secrets::new();
/// secrets.insert(GithubToken("ghp_example".into()));
/// let token: Secret<GithubToken> = secrets.get().unwrap();
/// assert_eq!(token.expose().0, "ghp_example");
/// assert_eq!(format!("{token:?}"), "Secret<GithubToken>(***)");
/// ```
pub struct Secret<T> {
    value: Arc<T>,
}

impl<T> Secret<T> {
    /// Wraps a value.
    pub fn new(value: T) -> Self {
        Secret {
            value: Arc::new(value),
        }
    }

    /// The secret value. Call it where the value is used, and nowhere else.
    pub fn expose(&self) -> &T {
        &self.value
    }
}

impl<T> Clone for Secret<T> {
    fn clone(&self) -> Self {
        Secret {
            value: Arc::clone(&self.value),
        }
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let full = type_name::<T>();
        let short = full.rsplit("::").next().unwrap_or(full);
        write!(f, "Secret<{short}>(***)")
    }
}

/// The secrets of a run, one per type, with the string values to redact.
#[derive(Clone, Default)]
pub struct Secrets {
    values: Extensions,
    redact: Vec<Arc<str>>,
    /// `redact` expanded into every form a secret is masked in.
    forms: Vec<Arc<str>>,
}

impl Secrets {
    /// No secrets.
    pub fn new() -> Self {
        Secrets::default()
    }

    /// Adds a secret whose text is known, so redaction can mask it wherever it
    /// appears in model-facing text, errors and events.
    pub fn insert<T: AsRef<str> + Send + Sync + 'static>(&mut self, value: T) {
        let text = value.as_ref();
        if !text.is_empty() {
            self.redact.push(Arc::from(text));
            self.forms
                .extend(secret_forms(text).into_iter().map(Arc::from));
        }
        self.values.insert(value);
    }

    /// Adds a secret that has no text form (a key pair, a signer). It is
    /// injected like any other, but redaction cannot look for it.
    pub fn insert_opaque<T: Send + Sync + 'static>(&mut self, value: T) {
        self.values.insert(value);
    }

    /// The secret of type `T`, if present.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Secret<T>> {
        self.values.get::<T>().map(|value| Secret { value })
    }

    /// The texts to redact.
    pub fn redaction_values(&self) -> &[Arc<str>] {
        &self.redact
    }

    /// The texts to redact in every form they are masked in
    /// ([`secret_forms`](crate::redact::secret_forms)), computed once when
    /// each secret is added.
    pub fn redaction_forms(&self) -> &[Arc<str>] {
        &self.forms
    }

    /// The number of secrets.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secrets({} values)", self.values.len())
    }
}
