//! Errors with context, for every harness.
//!
//! Harness errors are [`HarnessError`]s (boxed, so each library's own error
//! type stays intact). [`Context::context`] adds a note of what was being
//! done; [`ensure`] turns a failed condition into an error with a message.
//!
//! Both are used inside counted runs, so their success path must cost next to
//! nothing: the note is a `&'static str` (nothing is formatted or allocated
//! unless there is an error), both are inlined, and the error path is out of
//! line and marked cold. On success a `context` is one test and one branch.

use regress_measure::HarnessError;

/// An error with a note of what was being done when it happened.
#[derive(Debug)]
struct ContextError {
    what: &'static str,
    source: HarnessError,
}

impl std::fmt::Display for ContextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.source)
    }
}

impl std::error::Error for ContextError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

/// Adds a static note to an error.
pub trait Context<T> {
    /// `self`, or its error with the note `what` in front.
    fn context(self, what: &'static str) -> Result<T, HarnessError>;
}

impl<T, E: Into<HarnessError>> Context<T> for Result<T, E> {
    #[inline(always)]
    fn context(self, what: &'static str) -> Result<T, HarnessError> {
        match self {
            Ok(value) => Ok(value),
            Err(source) => Err(with_context(what, source)),
        }
    }
}

/// `source` with the note `what`: the out-of-line error path of
/// [`Context::context`], also for loops that build their errors by hand to
/// stay small.
#[cold]
#[inline(never)]
pub fn with_context(what: &'static str, source: impl Into<HarnessError>) -> HarnessError {
    Box::new(ContextError {
        what,
        source: source.into(),
    })
}

/// `Err(message())` unless `condition` holds. The message is only built on
/// failure.
#[inline(always)]
pub fn ensure(condition: bool, message: impl FnOnce() -> String) -> Result<(), HarnessError> {
    if condition {
        Ok(())
    } else {
        Err(message().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_keeps_the_source() {
        let error = Err::<(), _>("inner").context("outer").expect_err("error");
        assert_eq!(error.to_string(), "outer: inner");
        let source = std::error::Error::source(&*error).expect("a source");
        assert_eq!(source.to_string(), "inner");
        assert_eq!(Ok::<_, HarnessError>(7).context("unused").ok(), Some(7));
    }

    #[test]
    fn ensure_builds_the_message_only_on_failure() {
        ensure(true, || unreachable!("not built on success")).expect("holds");
        let error = ensure(false, || "it did not hold".to_owned()).expect_err("fails");
        assert_eq!(error.to_string(), "it did not hold");
    }
}
