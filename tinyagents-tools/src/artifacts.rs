//! [`ArtifactStore`]: where large tool outputs go instead of the model's
//! context.
//!
//! Stores are content-addressed: the key of some bytes is their SHA-256 in
//! lowercase hex, so storing the same bytes twice gives the same key and
//! keeps one copy. Two stores are provided: [`InMemoryArtifactStore`] and
//! [`FsArtifactStore`] (one file per key, written atomically through a
//! temporary file and a rename).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::hash::sha256_hex;
use crate::output::ArtifactRef;
use crate::util::sync::lock;

/// Why an artifact could not be stored or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArtifactError {
    /// The key is not 64 lowercase hex digits (so it names no artifact, and
    /// never a path outside the store).
    #[error("`{key}` is not an artifact key")]
    InvalidKey {
        /// The key given (cut to 80 characters).
        key: String,
    },
    /// The filesystem failed.
    #[error("artifact storage failed: {0}")]
    Io(#[from] std::io::Error),
    /// A store of the application's own failed.
    #[error("artifact storage failed")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// A content-addressed store for large outputs.
#[async_trait]
pub trait ArtifactStore: Send + Sync + 'static {
    /// Stores `bytes` of type `mime_type` and returns their reference; the key
    /// is [`artifact_key`] of the bytes.
    async fn put(&self, bytes: Vec<u8>, mime_type: &str) -> Result<ArtifactRef, ArtifactError>;

    /// The bytes stored under `key`, or `None` when there are none.
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ArtifactError>;
}

/// A shared store: the application keeps a handle on it (to read back what
/// the executor stored).
#[async_trait]
impl<T: ArtifactStore + ?Sized> ArtifactStore for Arc<T> {
    async fn put(&self, bytes: Vec<u8>, mime_type: &str) -> Result<ArtifactRef, ArtifactError> {
        (**self).put(bytes, mime_type).await
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ArtifactError> {
        (**self).get(key).await
    }
}

/// The content address of `bytes`: their SHA-256 as 64 lowercase hex digits.
pub fn artifact_key(bytes: &[u8]) -> String {
    sha256_hex(bytes)
}

/// The reference a store hands back for `bytes` of `mime_type`.
fn reference(bytes: &[u8], mime_type: &str) -> ArtifactRef {
    ArtifactRef {
        key: artifact_key(bytes),
        mime_type: mime_type.to_owned(),
        size: bytes.len() as u64,
    }
}

fn check_key(key: &str) -> Result<(), ArtifactError> {
    if key.len() == 64 && key.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        Ok(())
    } else {
        Err(ArtifactError::InvalidKey {
            key: key.chars().take(80).collect(),
        })
    }
}

/// Artifacts kept in memory for the life of the store.
#[derive(Debug, Default)]
pub struct InMemoryArtifactStore {
    items: Mutex<HashMap<String, Arc<[u8]>>>,
}

impl InMemoryArtifactStore {
    /// An empty store.
    pub fn new() -> Self {
        InMemoryArtifactStore::default()
    }

    /// The number of stored artifacts.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<[u8]>>> {
        lock(&self.items)
    }
}

#[async_trait]
impl ArtifactStore for InMemoryArtifactStore {
    async fn put(&self, bytes: Vec<u8>, mime_type: &str) -> Result<ArtifactRef, ArtifactError> {
        let stored = reference(&bytes, mime_type);
        self.lock()
            .entry(stored.key.clone())
            .or_insert_with(|| Arc::from(bytes));
        Ok(stored)
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ArtifactError> {
        check_key(key)?;
        Ok(self.lock().get(key).map(|b| b.to_vec()))
    }
}

/// Artifacts kept as files named by their key in one directory.
///
/// A write goes to a unique temporary file in the same directory and is then
/// renamed over the final name, so a reader never sees a partial artifact.
/// Keys are checked before they touch the filesystem.
#[derive(Debug, Clone)]
pub struct FsArtifactStore {
    root: PathBuf,
}

impl FsArtifactStore {
    /// A store in `root`, created if missing.
    pub fn new(root: impl Into<PathBuf>) -> Result<Self, ArtifactError> {
        let root = root.into();
        std::fs::create_dir_all(&root)?;
        Ok(FsArtifactStore { root })
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn write(root: &Path, key: &str, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = root.join(key);
        if path.is_file() {
            return Ok(());
        }
        let tmp = root.join(format!(
            ".tmp-{key}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let result = (|| {
            let mut file = std::fs::File::create_new(&tmp)?;
            file.write_all(bytes)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }
}

#[async_trait]
impl ArtifactStore for FsArtifactStore {
    async fn put(&self, bytes: Vec<u8>, mime_type: &str) -> Result<ArtifactRef, ArtifactError> {
        let stored = reference(&bytes, mime_type);
        let root = self.root.clone();
        let key = stored.key.clone();
        tokio::task::spawn_blocking(move || FsArtifactStore::write(&root, &key, &bytes))
            .await
            .map_err(|e| ArtifactError::Io(std::io::Error::other(e)))??;
        Ok(stored)
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, ArtifactError> {
        check_key(key)?;
        let path = self.root.join(key);
        let read = tokio::task::spawn_blocking(move || std::fs::read(path))
            .await
            .map_err(|e| ArtifactError::Io(std::io::Error::other(e)))?;
        match read {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}
