// What the build script and the web tests ask of the machine, written once: the build
// script includes this file (`include!`), and the crate exports it to the tests.

/// Whether this is Debian (not a derivative): the distribution whose Chromium package the
/// demo page test installs.
pub fn is_debian() -> bool {
    std::fs::read_to_string("/etc/os-release").is_ok_and(|s| s.lines().any(|l| l == "ID=debian"))
}

/// `program` in a directory of PATH, if there is one.
pub fn find_on_path(program: &str) -> Option<std::path::PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}
