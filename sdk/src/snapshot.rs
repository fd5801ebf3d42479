use crate::Error;

/// One tracked file of the snapshot commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    pub size: u64,
    /// The git blob id (hex).
    pub id: String,
    pub executable: bool,
}

/// The read-only view of one commit that a producer measures. In a component this is the
/// host's `snapshot` import; in unit tests, [`testing::MemorySnapshot`](crate::testing).
pub trait Snapshot {
    /// Tracked files matching any glob (git pathspec glob dialect, `:!glob` excludes), sorted by path.
    fn files(&self, globs: &[String]) -> Vec<Entry>;
    fn read(&self, path: &str) -> Result<Vec<u8>, String>;
    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>, String>;
    /// A declared job artifact, or the job's stdout under the name `"stdout"`.
    fn artifact(&self, name: &str) -> Result<Vec<u8>, String>;
}

impl dyn Snapshot + '_ {
    /// The file's content as text (invalid UTF-8 is replaced, not refused).
    pub fn read_text(&self, path: &str) -> Result<String, Error> {
        let bytes = self.read(path).map_err(Error::from)?;
        Ok(match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Feed the file to `sink` in chunks of at most `chunk` bytes: one read for a small file,
    /// ranged reads for a large one, so that no file needs to fit in memory at once. An entry of
    /// size 0 is not read (an empty file, or a submodule, which has no content to read).
    pub fn read_chunked(
        &self,
        entry: &Entry,
        chunk: u64,
        mut sink: impl FnMut(&[u8]),
    ) -> Result<(), Error> {
        let chunk = chunk.max(1);
        if entry.size == 0 {
            return Ok(());
        }
        if entry.size <= chunk {
            sink(&self.read(&entry.path).map_err(Error::from)?);
            return Ok(());
        }
        let mut offset = 0;
        loop {
            let bytes = self
                .read_range(&entry.path, offset, chunk)
                .map_err(Error::from)?;
            if bytes.is_empty() {
                return Ok(());
            }
            offset += bytes.len() as u64;
            sink(&bytes);
        }
    }

    /// A job artifact as text (invalid UTF-8 is replaced, not refused).
    pub fn artifact_text(&self, name: &str) -> Result<String, Error> {
        let bytes = self.artifact(name).map_err(Error::from)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}
