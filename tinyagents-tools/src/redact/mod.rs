//! Masking secret values and configured patterns in anything model-facing.
//!
//! A secret is masked in the forms it usually leaks in, as
//! [`secret_forms`] lists them (JSON-escaped, base64, hex; the forms that
//! are not covered are listed there too).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::output::{ContentBlock, ToolOutput};
use crate::spec::RedactionPolicy;

mod forms;

pub use forms::{MIN_EMBEDDED_BASE64, secret_forms};

/// The text that replaces a masked value.
pub const MASK: &str = "[redacted]";

/// Masks secret values, literal patterns and named JSON fields.
///
/// Build one per run and tool from the run's [`crate::runtime::Secrets`] and the tool's
/// [`RedactionPolicy`]; it is cheap when there is nothing to mask.
///
/// ```
/// use tinyagents_tools::redact::Redactor;
/// let r = Redactor::new(["sk-live-123"], ["internal.corp"], ["password"]);
/// assert_eq!(r.text("key sk-live-123 at internal.corp"), "key [redacted] at [redacted]");
/// let mut v = serde_json::json!({"user": "ada", "password": "hunter2"});
/// r.json(&mut v);
/// assert_eq!(v["password"], "[redacted]");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    needles: Vec<Arc<str>>,
    fields: Vec<String>,
}

impl Redactor {
    /// A redactor for the given secret values, literal patterns and field
    /// names. Empty strings are ignored.
    pub fn new<V, P, F>(secrets: V, patterns: P, fields: F) -> Self
    where
        V: IntoIterator,
        V::Item: AsRef<str>,
        P: IntoIterator,
        P::Item: AsRef<str>,
        F: IntoIterator,
        F::Item: AsRef<str>,
    {
        let mut needles: Vec<Arc<str>> = secrets
            .into_iter()
            .map(|s| Arc::from(s.as_ref()))
            .chain(patterns.into_iter().map(|s| Arc::from(s.as_ref())))
            .filter(|s: &Arc<str>| !s.is_empty())
            .collect();
        // Longest first, so a secret that contains another is masked whole.
        needles.sort_by_key(|s| std::cmp::Reverse(s.len()));
        needles.dedup();
        Redactor {
            needles,
            fields: fields
                .into_iter()
                .map(|f| f.as_ref().to_ascii_lowercase())
                .collect(),
        }
    }

    /// The redactor for a tool's `policy` in a run whose secret texts are
    /// `secrets`; each secret is masked in every form [`secret_forms`]
    /// lists.
    pub fn for_policy(policy: &RedactionPolicy, secrets: &[Arc<str>]) -> Self {
        let forms: Vec<Arc<str>> = secrets
            .iter()
            .flat_map(|s| secret_forms(s))
            .map(Arc::from)
            .collect();
        Redactor::for_policy_forms(policy, &forms)
    }

    /// [`for_policy`](Self::for_policy) for secrets already expanded into
    /// their forms, as [`Secrets::redaction_forms`](crate::runtime::Secrets::redaction_forms)
    /// keeps them (computed once per run, not once per call).
    pub fn for_policy_forms(policy: &RedactionPolicy, forms: &[Arc<str>]) -> Self {
        let forms: &[Arc<str>] = if policy.secrets { forms } else { &[] };
        Redactor::new(forms.iter().map(|s| &**s), &policy.patterns, &policy.fields)
    }

    /// Masks every model-facing part of an output: text, JSON blocks, links
    /// and the structured value.
    pub fn output(&self, output: &mut ToolOutput) {
        if self.is_noop() {
            return;
        }
        for block in &mut output.content {
            match block {
                ContentBlock::Text { text } => {
                    if let Cow::Owned(masked) = self.text(text) {
                        *text = masked;
                    }
                }
                ContentBlock::Json { value } => self.json(value),
                ContentBlock::ResourceLink {
                    uri,
                    name,
                    description,
                    ..
                } => {
                    for field in [Some(uri), name.as_mut(), description.as_mut()]
                        .into_iter()
                        .flatten()
                    {
                        if let Cow::Owned(masked) = self.text(field) {
                            *field = masked;
                        }
                    }
                }
                ContentBlock::Resource { uri, text, .. } => {
                    for field in [uri, text] {
                        if let Cow::Owned(masked) = self.text(field) {
                            *field = masked;
                        }
                    }
                }
                ContentBlock::ResourceBlob { uri, .. } => {
                    if let Cow::Owned(masked) = self.text(uri) {
                        *uri = masked;
                    }
                }
                ContentBlock::Image { .. } | ContentBlock::Audio { .. } => {}
            }
        }
        if let Some(value) = &mut output.structured {
            self.json(value);
        }
    }

    /// True when nothing would ever be masked.
    pub fn is_noop(&self) -> bool {
        self.needles.is_empty() && self.fields.is_empty()
    }

    /// `text` with every secret and pattern masked.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out: Cow<'a, str> = Cow::Borrowed(text);
        for needle in &self.needles {
            if out.contains(&**needle) {
                out = Cow::Owned(out.replace(&**needle, MASK));
            }
        }
        out
    }

    /// Masks `value` in place: string leaves through [`Redactor::text`], and
    /// the whole value of any field whose name is listed. Object keys that
    /// contain a secret are masked too.
    pub fn json(&self, value: &mut Value) {
        if self.is_noop() {
            return;
        }
        match value {
            Value::String(s) => {
                if let Cow::Owned(masked) = self.text(s) {
                    *s = masked;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.json(v)),
            Value::Object(map) => {
                let keys_to_fix: Vec<String> = map
                    .keys()
                    .filter(|k| matches!(self.text(k), Cow::Owned(_)))
                    .cloned()
                    .collect();
                for key in keys_to_fix {
                    if let Some(v) = map.remove(&key) {
                        map.insert(self.text(&key).into_owned(), v);
                    }
                }
                for (key, v) in map.iter_mut() {
                    if self.fields.iter().any(|f| f.eq_ignore_ascii_case(key)) {
                        *v = Value::String(MASK.to_owned());
                    } else {
                        self.json(v);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::forms::{STANDARD, URL_SAFE, base64, hex};
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_values_keys_and_fields_are_masked() {
        let r = Redactor::new(["tok-1", "tok-12"], Vec::<&str>::new(), ["Token"]);
        let mut v = json!({"a": ["x tok-12 y", {"token": "plain"}], "tok-1": 1});
        r.json(&mut v);
        assert_eq!(
            v,
            json!({"a": ["x [redacted] y", {"token": "[redacted]"}], "[redacted]": 1})
        );
    }

    #[test]
    fn a_policy_that_turns_secret_masking_off_keeps_patterns() {
        let policy = RedactionPolicy {
            secrets: false,
            fields: vec![],
            patterns: vec!["corp".into()],
        };
        let r = Redactor::for_policy(&policy, &[Arc::from("s3cret")]);
        assert_eq!(r.text("s3cret corp"), "s3cret [redacted]");
    }

    #[test]
    fn every_listed_form_of_a_secret_is_masked() {
        let secret = "tök\"en\\42-abcdef";
        let r = Redactor::for_policy(&RedactionPolicy::default(), &[Arc::from(secret)]);
        let json_text = serde_json::to_string(&json!({"k": secret})).unwrap();
        let ascii = "t\\u00f6k\\\"en\\\\42-abcdef";
        let twice = serde_json::to_string(&json_text).unwrap();
        let basic = base64(format!("user:{secret}").as_bytes(), STANDARD);
        let forms = Redactor::for_policy_forms(
            &RedactionPolicy::default(),
            &secret_forms(secret)
                .into_iter()
                .map(Arc::from)
                .collect::<Vec<_>>(),
        );
        for leaked in [
            json_text.clone(),
            ascii.to_owned(),
            ascii.replace("00f6", "00F6"),
            twice,
            base64(secret.as_bytes(), STANDARD),
            base64(secret.as_bytes(), URL_SAFE)
                .trim_end_matches('=')
                .to_owned(),
            basic,
            hex(secret.as_bytes(), b"0123456789abcdef"),
            hex(secret.as_bytes(), b"0123456789ABCDEF"),
        ] {
            for r in [&r, &forms] {
                let masked = r.text(&leaked);
                assert!(masked.contains(MASK), "{leaked} -> {masked}");
                assert!(!masked.contains("42-abcdef"), "{leaked} -> {masked}");
            }
        }
    }
}
