//! Errors in composed shaders point at the original file and line, locked by golden files
//! (tests/golden/*.txt). Regenerate them with UPDATE_GOLDEN=1 after an intended change.

use std::path::Path;

use gpu_heap::{composer, HeapConfig, ShaderError, Strategy};

fn compose_error(file: &str) -> ShaderError {
    let composer = composer(
        &HeapConfig::new(1 << 20).strategy(Strategy::RwBm),
        &wgpu::Limits::default(),
        wgpu::Features::empty(),
    )
    .expect("a valid configuration");
    let path = Path::new("tests/data").join(file);
    match composer.compose_file(&path) {
        Err(e) => e,
        Ok(shader) => shader.validate().expect_err("the shader has an error"),
    }
}

fn golden(name: &str, error: &ShaderError) {
    let text = format!("{error}\n");
    let path = Path::new("tests/golden").join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(text, expected, "error text differs from {}", path.display());
}

#[test]
fn parse_error_points_at_the_included_file() {
    let e = compose_error("parse_error.wgsl");
    match &e {
        ShaderError::Parse { at, .. } => {
            assert!(at.file.ends_with("helpers/broken_syntax.wgsl"), "{e}");
            assert_eq!(at.line, 2, "{e}");
        }
        other => panic!("expected a parse error, got {other}"),
    }
    golden("parse_error", &e);
}

#[test]
fn validation_error_points_at_the_user_line() {
    let e = compose_error("validation_error.wgsl");
    let text = e.to_string();
    assert!(text.contains("validation_error.wgsl:7"), "{text}");
    golden("validation_error", &e);
}

#[test]
fn missing_include_is_a_hard_error() {
    let e = compose_error("missing_include.wgsl");
    match &e {
        ShaderError::IncludeNotFound { at, path } => {
            assert_eq!((at.line, path.as_str()), (2, "does_not_exist.wgsl"));
        }
        other => panic!("expected a missing include, got {other}"),
    }
    golden("missing_include", &e);
}
