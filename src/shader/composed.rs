//! What composition produces: the flat WGSL text with the origin of each of its lines,
//! validated with naga, and errors located in the original files.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// A place in an original (not composed) source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceLocation {
    /// The file, as it was included or registered.
    pub file: Arc<str>,
    /// 1-based.
    pub line: u32,
    /// 1-based; 0 when unknown.
    pub column: u32,
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.column > 0 {
            write!(f, "{}:{}:{}", self.file, self.line, self.column)
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// Errors from composing or validating a shader; locations are in the original files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShaderError {
    /// An `#include` names a file found nowhere.
    #[error(
        "{at}: cannot find include \"{path}\" (looked next to the including file, in the \
             registered sources and in gpu-heap's shader library)"
    )]
    IncludeNotFound {
        /// The `#include` line.
        at: SourceLocation,
        /// The path it names.
        path: String,
    },

    /// A preprocessor directive is malformed or unknown.
    #[error("{at}: {message}")]
    Directive {
        /// The directive's line.
        at: SourceLocation,
        /// What is wrong with it.
        message: String,
    },

    /// A file could not be read.
    #[error("cannot read shader {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },

    /// naga could not parse the composed WGSL.
    #[error("{at}: {message}")]
    Parse {
        /// Where in the original sources.
        at: SourceLocation,
        /// naga's message.
        message: String,
    },

    /// naga parsed the composed WGSL but it does not validate.
    #[error("{}{message}", at.as_ref().map(|a| format!("{a}: ")).unwrap_or_default())]
    Validation {
        /// Where in the original sources, if naga gave a span.
        at: Option<SourceLocation>,
        /// naga's message.
        message: String,
    },
}

/// A composed shader: flat WGSL text plus the origin of each of its lines.
#[derive(Clone, Debug)]
pub struct ComposedShader {
    pub(super) source: String,
    pub(super) origins: Vec<SourceLocation>,
}

impl ComposedShader {
    /// The flat WGSL text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Where line `line` (1-based) of the composed text came from.
    pub fn origin(&self, line: u32) -> Option<&SourceLocation> {
        self.origins.get((line as usize).checked_sub(1)?)
    }

    fn locate(&self, span: naga::Span) -> Option<SourceLocation> {
        if span == naga::Span::default() {
            return None;
        }
        let loc = span.location(&self.source);
        self.origin(loc.line_number).map(|o| SourceLocation {
            column: loc.line_position,
            ..o.clone()
        })
    }

    /// Parses and validates the composed text with naga; errors point at original files.
    pub fn validate(&self) -> Result<naga::Module, ShaderError> {
        let module = naga::front::wgsl::parse_str(&self.source).map_err(|e| {
            let mut labels = e.labels();
            let primary = labels.next();
            let at = primary
                .and_then(|(span, _)| self.locate(span))
                .unwrap_or_else(|| SourceLocation {
                    file: "<composed>".into(),
                    line: 0,
                    column: 0,
                });
            let mut message = e.message().to_owned();
            for (span, label) in primary.into_iter().chain(labels) {
                if label.is_empty() {
                    continue;
                }
                match self.locate(span) {
                    Some(l) if l != at => message.push_str(&format!("\n  {l}: {label}")),
                    _ => message.push_str(&format!("\n  {label}")),
                }
            }
            ShaderError::Parse { at, message }
        })?;
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .map_err(|e| {
            let mut spans = e.spans();
            let primary = spans.next();
            let at = primary.and_then(|(span, _)| self.locate(*span));
            let mut message = error_chain(e.as_inner());
            for (span, label) in primary.into_iter().chain(spans) {
                if let Some(l) = self.locate(*span) {
                    message.push_str(&format!("\n  {l}: {label}"));
                }
            }
            ShaderError::Validation { at, message }
        })?;
        Ok(module)
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}
