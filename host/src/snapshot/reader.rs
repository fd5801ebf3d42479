//! Reading a snapshot's blobs, one reader a thread: the last blob kept for `read-range`, the
//! files of a listing inflated ahead ([`super::prefetch`]) or shared with the other executions
//! of a batch ([`super::shared`]), and in a verifying snapshot every blob hashed against its
//! id as it is read.

use std::sync::Arc;

use gix::ObjectId;

use super::objects::{Handle, Objects};
use super::shared::{Share, Take};
use super::{Entry, EntryKind, Pathspec, PathspecError, ReadError, prefetch};

/// Reads blobs of one snapshot for one thread. Keeps the last blob read so that a producer
/// streaming a large file through `read-range` inflates it once, and inflates the files of
/// the last listing ahead of the reads on other threads ([`prefetch`]).
pub struct Reader {
    objects: Handle,
    shared: Arc<Objects>,
    entries: super::Entries,
    sizes: Arc<super::sizes::Sizes>,
    verify: bool,
    last: Option<(ObjectId, Arc<Vec<u8>>)>,
    prefetch: Option<prefetch::Prefetch>,
    share: Option<Share>,
}

impl Reader {
    /// A reader of `snapshot` for this thread.
    pub(super) fn new(snapshot: &super::Snapshot) -> Self {
        Reader {
            objects: snapshot.objects.handle(4 << 20),
            shared: Arc::clone(&snapshot.objects),
            entries: snapshot.entries.clone(),
            sizes: Arc::clone(&snapshot.sizes),
            verify: snapshot.verify,
            last: None,
            prefetch: None,
            share: snapshot.share.clone(),
        }
    }

    pub fn entries(&self) -> &super::Entries {
        &self.entries
    }

    /// The entries, shared: to walk them while reading.
    pub fn shared_entries(&self) -> super::Entries {
        self.entries.clone()
    }

    /// Parse the pathspecs a producer lists (see [`Snapshot::pathspec`]).
    pub fn pathspec<S: AsRef<str>>(&self, specs: &[S]) -> Result<Pathspec, PathspecError> {
        Pathspec::parse(specs, None)
    }

    /// The size in bytes of the blob of `entries()[index]` (0 for a submodule).
    pub fn size(&mut self, index: usize) -> Result<u64, ReadError> {
        let entries = self.entries.clone();
        let entry = entries
            .get(index)
            .ok_or_else(|| ReadError::NotFound(format!("entry #{index}")))?;
        if let Some(size) = self.sizes.get(index) {
            return Ok(size);
        }
        let size = match entry.kind {
            EntryKind::Submodule => 0,
            // A header can lie about the size as a rewritten object can about its content.
            _ if self.verify => self.read(entry.path())?.1.len() as u64,
            _ => self
                .objects
                .repo()
                .find_header(entry.id)
                .map_err(|e| ReadError::Object {
                    path: entry.path().to_string(),
                    id: entry.id,
                    message: e.to_string(),
                })?
                .size(),
        };
        self.sizes.set(index, size);
        Ok(size)
    }

    pub fn entry(&self, path: &str) -> Option<&Entry> {
        self.position(path).map(|i| &self.entries[i])
    }

    fn position(&self, path: &str) -> Option<usize> {
        self.entries.binary_search_by(|e| e.path().cmp(path)).ok()
    }

    /// A producer listed `indices` (entries whose sizes it was given), in this order: their
    /// blobs are inflated ahead of its reads once it reads the first of them. Replaces the
    /// plan of an earlier listing.
    pub fn plan(&mut self, indices: &[usize]) {
        self.prefetch = None;
        if self.verify {
            return;
        }
        // The batch reads ahead what its members will read.
        let first = indices
            .first()
            .and_then(|&i| Some((i, self.entries.get(i)?)));
        if let (Some(share), Some((at, first))) = (&self.share, first)
            && share.expects(at, first.path())
        {
            return;
        }
        let listed = indices
            .iter()
            .filter_map(|&index| {
                let entry = self.entries.get(index)?;
                let size = self.sizes.get(index)?;
                (entry.kind != EntryKind::Submodule && size > 0).then_some((index, entry.id, size))
            })
            .collect();
        self.prefetch = Some(prefetch::Prefetch::new(Arc::clone(&self.shared), listed));
    }

    /// The whole content of `path`.
    pub fn read(&mut self, path: &str) -> Result<(ObjectId, Arc<Vec<u8>>), ReadError> {
        let index = self
            .position(path)
            .ok_or_else(|| ReadError::NotFound(path.to_owned()))?;
        let entry = &self.entries[index];
        if entry.kind == EntryKind::Submodule {
            return Err(ReadError::Submodule(path.to_owned()));
        }
        let id = entry.id;
        if let Some((last_id, bytes)) = &self.last
            && *last_id == id
        {
            return Ok((id, Arc::clone(bytes)));
        }
        let bytes = loop {
            break match self.share.as_ref().map(|s| s.take(index, path, id)) {
                Some(Take::Ready(bytes)) => bytes,
                Some(Take::Share(ticket)) => {
                    let read = self.inflate(path, id);
                    ticket.fulfil(read.as_ref().ok().map(Arc::clone));
                    read?
                }
                Some(Take::Help(ticket)) => {
                    let (other, other_id) = ticket.entry();
                    let read = self.inflate(other, other_id).ok();
                    ticket.fulfil(read);
                    continue;
                }
                Some(Take::Direct) | None => {
                    match self.prefetch.as_mut().and_then(|p| p.take(index)) {
                        Some(bytes) => bytes,
                        None => self.inflate(path, id)?,
                    }
                }
            };
        };
        if self.verify {
            verify_blob(path, id, &bytes)?;
        }
        self.last = Some((id, Arc::clone(&bytes)));
        Ok((id, bytes))
    }

    /// Inflate the blob `id` at `path` on this thread.
    fn inflate(&mut self, path: &str, id: ObjectId) -> Result<Arc<Vec<u8>>, ReadError> {
        let blob = self.objects.blob(id).map_err(|e| ReadError::Object {
            path: path.to_owned(),
            id,
            message: e.to_string(),
        })?;
        Ok(Arc::new(blob))
    }

    /// Like [`read`](Self::read), as an owned buffer: the blob is not kept for `read-range`,
    /// so it moves to the caller without a copy when nothing else holds it.
    pub fn read_owned(&mut self, path: &str) -> Result<(ObjectId, Vec<u8>), ReadError> {
        let (id, bytes) = self.read(path)?;
        self.last = None;
        Ok((id, Arc::unwrap_or_clone(bytes)))
    }
}

/// `bytes` are the blob `id` names: hashed as git hashes a blob.
fn verify_blob(path: &str, id: ObjectId, bytes: &[u8]) -> Result<(), ReadError> {
    let found = gix::objs::compute_hash(id.kind(), gix::objs::Kind::Blob, bytes).map_err(|e| {
        ReadError::Object {
            path: path.to_owned(),
            id,
            message: format!("its content cannot be hashed: {e}"),
        }
    })?;
    match found == id {
        true => Ok(()),
        false => Err(ReadError::Tampered {
            path: path.to_owned(),
            id,
            found,
        }),
    }
}
