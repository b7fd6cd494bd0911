//! A fresh copy of part of the repository, as a new clone has it, for the tests that run the
//! documentation's commands as written.

/// Copies `from` into `to` as a fresh clone has it: without a virtual environment, caches or
/// an installed package's metadata.
pub(crate) fn copy_clean(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "__pycache__" || name.ends_with(".egg-info") {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&*name));
        if entry.file_type().unwrap().is_dir() {
            copy_clean(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// This process's `PATH` without any virtual environment's folder: the shell of someone who has
/// just cloned.
pub(crate) fn path_without_venvs() -> String {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|p| !p.contains("venv"))
        .collect::<Vec<_>>()
        .join(":")
}
