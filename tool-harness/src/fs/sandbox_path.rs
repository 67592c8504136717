//! Checking a path a tool was given before any file system sees it: the lexical part of the
//! sandbox. What a path *resolves* to (symbolic links) is checked by the file system itself.

use std::path::{Component, Path, PathBuf};

use crate::FsError;

/// The longest path accepted, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// The longest single name accepted, in bytes (Linux's `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// A path shown in messages: as given, lossily if it is not UTF-8.
pub(crate) fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Checks `path` and returns it relative to the root, with `.` segments dropped and `..`
/// segments resolved lexically.
///
/// Refused: an empty path, a NUL byte, a path that is not UTF-8, one longer than
/// [`MAX_PATH_BYTES`] or with a name longer than [`MAX_NAME_BYTES`], `..` that climbs above
/// the root, and an absolute path that does not lie inside `root` (with no `root`, every
/// absolute path). An absolute path inside `root` is taken relative to it.
///
/// Lexical resolution of `..` is what the model means; a local file system still resolves
/// the result through symbolic links beneath its root, so a link cannot be used to climb out.
pub(crate) fn relative_to_root(path: &Path, root: Option<&Path>) -> Result<PathBuf, FsError> {
    let invalid = |reason: &str| FsError::InvalidPath {
        path: shown(path),
        reason: reason.to_owned(),
    };
    let raw = path.as_os_str().as_encoded_bytes();
    if raw.is_empty() {
        return Err(invalid("the path is empty"));
    }
    if raw.contains(&0) {
        return Err(invalid("the path contains a NUL byte"));
    }
    let Some(text) = path.to_str() else {
        return Err(invalid("the path is not valid UTF-8"));
    };
    if text.len() > MAX_PATH_BYTES {
        return Err(invalid(&format!(
            "the path is {} bytes long, more than {MAX_PATH_BYTES}",
            text.len()
        )));
    }
    let relative: &Path = if path.is_absolute() {
        match root.and_then(|root| path.strip_prefix(root).ok()) {
            Some(inside) => inside,
            None => {
                return Err(FsError::OutsideRoot {
                    path: shown(path),
                    reason: match root {
                        Some(root) => format!(
                            "an absolute path must lie inside the root {}; use a path relative to it",
                            root.display()
                        ),
                        None => "absolute paths are not accepted; use a path relative to the root"
                            .to_owned(),
                    },
                });
            }
        }
    } else {
        path
    };
    let mut resolved = PathBuf::new();
    for component in relative.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !resolved.pop() {
                    return Err(FsError::OutsideRoot {
                        path: shown(path),
                        reason: "'..' leads above the root".to_owned(),
                    });
                }
            }
            Component::Normal(name) => {
                if name.len() > MAX_NAME_BYTES {
                    return Err(invalid(&format!(
                        "the name {:?}… is {} bytes long, more than {MAX_NAME_BYTES}",
                        name.to_string_lossy().chars().take(16).collect::<String>(),
                        name.len()
                    )));
                }
                resolved.push(name);
            }
            // Absolute paths were made relative above; a prefix exists only on Windows.
            Component::RootDir | Component::Prefix(_) => {
                return Err(FsError::OutsideRoot {
                    path: shown(path),
                    reason: "it names the file system's root".to_owned(),
                });
            }
        }
    }
    Ok(resolved)
}

/// The ending that makes `path` name a directory (`dir/`, `dir/.`, `dir/..`), or `None`.
fn directory_ending(path: &Path) -> Option<&'static str> {
    let raw = path.as_os_str().as_encoded_bytes();
    ["/", "/.", "/.."]
        .into_iter()
        .find(|ending| raw.ends_with(ending.as_bytes()))
}

/// [`relative_to_root`] for a path that must name a file (to read or write): also refuses
/// one ending in `/` (or `/.`, `/..`), which names a directory whatever is there, so that
/// `write` to `newdir/` does not create a file named `newdir`.
pub(crate) fn file_relative_to_root(path: &Path, root: Option<&Path>) -> Result<PathBuf, FsError> {
    let relative = relative_to_root(path, root)?;
    match directory_ending(path) {
        Some(ending) => Err(FsError::InvalidPath {
            path: shown(path),
            reason: format!(
                "it ends with '{ending}', so it names a directory, not a file; give a file's \
                 path (a directory is created by writing a file inside it)"
            ),
        }),
        None => Ok(relative),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(path: &str) -> Result<PathBuf, FsError> {
        relative_to_root(Path::new(path), Some(Path::new("/srv/root")))
    }

    #[test]
    fn normalises_inside_paths() {
        assert_eq!(rel("a/./b/../c.txt").unwrap(), Path::new("a/c.txt"));
        assert_eq!(
            rel("/srv/root/src/lib.rs").unwrap(),
            Path::new("src/lib.rs")
        );
        assert_eq!(rel(".").unwrap(), Path::new(""));
    }

    #[test]
    fn refuses_what_leads_out_or_cannot_be_a_name() {
        for (path, needle) in [
            ("../x", "'..' leads above the root"),
            ("a/../../x", "'..' leads above the root"),
            ("/etc/passwd", "must lie inside the root /srv/root"),
            ("/srv/root/../x", "'..' leads above the root"),
            ("/srv/rootx/y", "must lie inside the root"),
            ("", "empty"),
            ("a\0b", "NUL byte"),
        ] {
            let err = rel(path).unwrap_err();
            assert!(err.to_string().contains(needle), "{path:?}: {err}");
            assert_eq!(err.path(), path);
        }
        let long_name = "n".repeat(256);
        assert!(
            rel(&long_name)
                .unwrap_err()
                .to_string()
                .contains("256 bytes long")
        );
        let long_path = "a/".repeat(2100);
        assert!(
            rel(&long_path)
                .unwrap_err()
                .to_string()
                .contains("more than 4096")
        );
        let no_root = relative_to_root(Path::new("/x"), None).unwrap_err();
        assert!(
            no_root
                .to_string()
                .contains("absolute paths are not accepted")
        );
    }

    #[test]
    fn a_file_path_must_not_end_like_a_directory() {
        let file = |path: &str| file_relative_to_root(Path::new(path), None);
        assert_eq!(file("a/b.txt").unwrap(), Path::new("a/b.txt"));
        assert_eq!(file("a/.hidden").unwrap(), Path::new("a/.hidden"));
        assert_eq!(file("a/..b").unwrap(), Path::new("a/..b"));
        for (path, ending) in [("new/", "'/'"), ("a/b/.", "'/.'"), ("a/b/..", "'/..'")] {
            let err = file(path).unwrap_err();
            assert_eq!(err.path(), path);
            assert!(
                err.to_string()
                    .contains(&format!("ends with {ending}, so it names a directory")),
                "{err}"
            );
        }
        // What leads out is reported as such first.
        assert!(matches!(file("../x/"), Err(FsError::OutsideRoot { .. })));
    }

    #[cfg(unix)]
    #[test]
    fn refuses_non_utf8() {
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(std::ffi::OsStr::from_bytes(b"bad\xffname"));
        let err = relative_to_root(path, None).unwrap_err();
        assert!(err.to_string().contains("not valid UTF-8"), "{err}");
        assert_eq!(err.path(), "bad\u{fffd}name");
    }
}
