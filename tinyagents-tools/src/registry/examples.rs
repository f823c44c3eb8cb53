//! The check of a tool's examples of arguments against its compiled input
//! schema, at registration: an example the executor would refuse is never
//! shown to a model.

use super::RegistryError;
use crate::error::ArgumentProblem;
use crate::registry::validation::{InputValidator, ProblemKind};
use crate::spec::ToolSpec;

/// `Ok` when every example of `spec` is an object the input schema accepts;
/// otherwise the first failing example and field.
pub(super) fn check_examples(spec: &ToolSpec, input: &InputValidator) -> Result<(), RegistryError> {
    for (i, example) in spec.examples.iter().enumerate() {
        let refused = |pointer: String, problem: String| RegistryError::InvalidExample {
            tool: spec.name.to_string(),
            example: i + 1,
            field: ArgumentProblem::new(pointer, "").field(),
            problem,
        };
        if !example.is_object() {
            return Err(refused(
                String::new(),
                "an example is the JSON object of a call's arguments".to_owned(),
            ));
        }
        let Some(error) = input.problems(example).into_iter().next() else {
            continue;
        };
        let at = error.at.as_str();
        let child = |key: &str| format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        let (pointer, problem) = match &error.kind {
            ProblemKind::AdditionalProperties { unexpected } => (
                child(unexpected.first().map_or("", String::as_str)),
                "is not an accepted argument".to_owned(),
            ),
            ProblemKind::Required { property } => (child(property), "is required".to_owned()),
            _ => (at.to_owned(), error.to_string()),
        };
        return Err(refused(pointer, problem));
    }
    Ok(())
}
