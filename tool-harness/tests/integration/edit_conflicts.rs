//! `edit` over a file that another writer (a shell command, the user's editor) changes or
//! removes between the edit's read and its write: refused, the other change kept, nothing
//! written; over both file systems, and over one that leaves the check to
//! `FileSystem::replace_if_unchanged`'s provided method.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use toolsmith_core::ToolCallManager;
use toolsmith_harness::{
    FileSystem, FsError, InMemoryFileSystem, LocalFileSystem, SearchError, SearchQuery,
    SearchReport, ToolPreset,
};

use crate::common::{error, file_systems, text};

/// What the other writer does to the file.
#[derive(Debug, Clone)]
enum OutsideChange {
    Write(&'static str),
    /// Removes it, on disk (a local file system only).
    Remove,
}

/// A file system that passes every call to `inner`, but right after the first read (the
/// edit's) makes `change` to the file read, as another writer could then.
#[derive(Debug)]
struct ChangedAfterFirstRead {
    inner: Arc<dyn FileSystem>,
    change: Mutex<Option<OutsideChange>>,
}

impl ChangedAfterFirstRead {
    fn new(inner: Arc<dyn FileSystem>, change: OutsideChange) -> Self {
        Self {
            inner,
            change: Mutex::new(Some(change)),
        }
    }
}

#[async_trait]
impl FileSystem for ChangedAfterFirstRead {
    fn local_root(&self) -> Option<&Path> {
        self.inner.local_root()
    }

    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        let read = self.inner.read(path).await;
        let change = self.change.lock().unwrap().take();
        match change {
            Some(OutsideChange::Write(text)) => {
                self.inner.write(path, text.as_bytes().to_vec()).await?;
            }
            Some(OutsideChange::Remove) => {
                let root = self.inner.local_root().expect("a local file system");
                std::fs::remove_file(root.join(path)).unwrap();
            }
            None => {}
        }
        read
    }

    async fn write(&self, path: &Path, contents: Vec<u8>) -> Result<bool, FsError> {
        self.inner.write(path, contents).await
    }

    async fn replace_if_unchanged(
        &self,
        path: &Path,
        read: &[u8],
        contents: Vec<u8>,
    ) -> Result<(), FsError> {
        self.inner.replace_if_unchanged(path, read, contents).await
    }

    async fn search(&self, query: SearchQuery) -> Result<SearchReport, SearchError> {
        self.inner.search(query).await
    }
}

/// [`ChangedAfterFirstRead`] without a `replace_if_unchanged` of its own: a file system of
/// the user's, which has the trait's provided method.
#[derive(Debug)]
struct WithoutOwnCheck(ChangedAfterFirstRead);

#[async_trait]
impl FileSystem for WithoutOwnCheck {
    async fn read(&self, path: &Path) -> Result<Vec<u8>, FsError> {
        self.0.read(path).await
    }

    async fn write(&self, path: &Path, contents: Vec<u8>) -> Result<bool, FsError> {
        self.0.write(path, contents).await
    }

    async fn search(&self, query: SearchQuery) -> Result<SearchReport, SearchError> {
        self.0.search(query).await
    }
}

fn manager(fs: impl FileSystem + 'static) -> ToolCallManager {
    ToolPreset::files(Arc::new(fs))
        .into_manager("files")
        .unwrap()
}

const REFUSED: &str = "Tool 'edit' failed: refused \"f.txt\": the file changed since it was read \
                       (another program wrote to it or removed it meanwhile), so nothing was \
                       written; read it again and redo the change";

#[tokio::test]
async fn an_edit_of_a_file_changed_since_its_read_is_refused_and_the_change_kept() {
    for (kind, fs, dir) in file_systems() {
        fs.write(Path::new("f.txt"), b"a = 1\n".to_vec())
            .await
            .unwrap();
        let changing =
            ChangedAfterFirstRead::new(Arc::clone(&fs), OutsideChange::Write("a = 1\nb = 2\n"));
        let m = manager(changing);
        let err = error(
            &m,
            "edit",
            json!({"path": "f.txt", "old_string": "a = 1", "new_string": "a = 3"}),
        )
        .await;
        assert_eq!(err.to_string(), REFUSED, "{kind}");
        assert_eq!(
            fs.read(Path::new("f.txt")).await.unwrap(),
            b"a = 1\nb = 2\n",
            "{kind}: the other writer's change is kept"
        );
        if let Some(dir) = &dir {
            let names: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|entry| entry.unwrap().file_name())
                .collect();
            assert_eq!(names, ["f.txt"], "no temporary is left");
        }
        // Read again (the change is made once), the edit goes through.
        assert_eq!(
            text(
                &m,
                "edit",
                json!({"path": "f.txt", "old_string": "a = 1", "new_string": "a = 3"})
            )
            .await,
            "Edited \"f.txt\": replaced 1 occurrence",
            "{kind}"
        );
        assert_eq!(
            fs.read(Path::new("f.txt")).await.unwrap(),
            b"a = 3\nb = 2\n",
            "{kind}"
        );
    }
}

#[tokio::test]
async fn a_file_system_of_one_s_own_checks_through_the_provided_method() {
    let fs: Arc<dyn FileSystem> = Arc::new(InMemoryFileSystem::new().with_file("f.txt", "a = 1\n"));
    let changing = WithoutOwnCheck(ChangedAfterFirstRead::new(
        Arc::clone(&fs),
        OutsideChange::Write("a = 2\n"),
    ));
    let err = error(
        &manager(changing),
        "edit",
        json!({"path": "f.txt", "old_string": "a = 1", "new_string": "a = 3"}),
    )
    .await;
    assert_eq!(err.to_string(), REFUSED);
    assert_eq!(fs.read(Path::new("f.txt")).await.unwrap(), b"a = 2\n");
}

#[tokio::test]
async fn an_edit_of_a_file_removed_since_its_read_is_refused_and_not_made_again() {
    let (_, fs, dir) = file_systems().remove(0);
    let dir = dir.expect("the local file system first");
    fs.write(Path::new("f.txt"), b"a = 1\n".to_vec())
        .await
        .unwrap();
    let changing = ChangedAfterFirstRead::new(Arc::clone(&fs), OutsideChange::Remove);
    let err = error(
        &manager(changing),
        "edit",
        json!({"path": "f.txt", "old_string": "a = 1", "new_string": "a = 3"}),
    )
    .await;
    assert_eq!(err.to_string(), REFUSED);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A replacement refused because the file's directory was removed since the read leaves
/// nothing behind: the directories are not made again (they were, empty, by the write's
/// usual path).
#[tokio::test]
async fn a_directory_removed_since_the_read_is_not_made_again() {
    let dir = tempfile::tempdir().unwrap();
    let fs = LocalFileSystem::new(dir.path()).unwrap();
    let path = Path::new("sub/deeper/notes.md");
    fs.write(path, b"one\n".to_vec()).await.unwrap();
    let read = fs.read(path).await.unwrap();
    std::fs::remove_dir_all(dir.path().join("sub")).unwrap();
    let err = fs
        .replace_if_unchanged(path, &read, b"1\n".to_vec())
        .await
        .unwrap_err();
    assert!(matches!(err, FsError::ChangedSinceRead { .. }), "{err}");
    assert!(
        !dir.path().join("sub").exists(),
        "the removed directories were made again by a refused replacement"
    );
}
