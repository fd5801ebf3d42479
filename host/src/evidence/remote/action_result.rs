//! The few messages of the Remote Execution API (`build.bazel.remote.execution.v2`,
//! `remote_execution.proto`) an action cache entry is made of, derived with `prost` (no
//! protoc): only the fields discern writes or reads; a decoder skips every other field, so an
//! entry a server decorated (bazel-remote adds `execution_metadata`) still reads.

/// `Digest`: a blob's lowercase hex SHA-256 and its size.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Digest {
    #[prost(string, tag = "1")]
    pub hash: String,
    #[prost(int64, tag = "2")]
    pub size_bytes: i64,
}

/// `OutputFile`: one named output, by digest (its `contents` inlined only where a server chose
/// to; tag 3 and 6 are reserved).
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct OutputFile {
    #[prost(string, tag = "1")]
    pub path: String,
    #[prost(message, optional, tag = "2")]
    pub digest: Option<Digest>,
    #[prost(bool, tag = "4")]
    pub is_executable: bool,
    #[prost(bytes = "vec", tag = "5")]
    pub contents: Vec<u8>,
}

/// `ActionResult`: what the action cache keeps under a key (tag 1 is reserved).
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct ActionResult {
    #[prost(message, repeated, tag = "2")]
    pub output_files: Vec<OutputFile>,
    #[prost(int32, tag = "4")]
    pub exit_code: i32,
}

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self {
            hash: crate::digest::Digest::of(bytes).hex(),
            size_bytes: i64::try_from(bytes.len()).unwrap_or(i64::MAX),
        }
    }
}

impl OutputFile {
    /// The output `path` holding `bytes`, by digest.
    pub fn of(path: &str, bytes: &[u8]) -> Self {
        Self {
            path: path.to_owned(),
            digest: Some(Digest::of(bytes)),
            is_executable: false,
            contents: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    #[test]
    fn the_wire_format_has_the_field_numbers_of_remote_execution_proto() {
        let digest = Digest {
            hash: "ab".into(),
            size_bytes: 3,
        };
        // hash = 1 (length-delimited), size_bytes = 2 (varint).
        assert_eq!(digest.encode_to_vec(), [0x0a, 2, b'a', b'b', 0x10, 3]);
        let file = OutputFile {
            path: "p".into(),
            digest: Some(digest.clone()),
            is_executable: true,
            contents: b"c".to_vec(),
        };
        // path = 1, digest = 2, is_executable = 4, contents = 5.
        let mut want = vec![0x0a, 1, b'p', 0x12, 6];
        want.extend(digest.encode_to_vec());
        want.extend([0x20, 1, 0x2a, 1, b'c']);
        assert_eq!(file.encode_to_vec(), want);
        let result = ActionResult {
            output_files: vec![file.clone()],
            exit_code: 1,
        };
        // output_files = 2, exit_code = 4.
        let mut want = vec![0x12, u8::try_from(file.encoded_len()).expect("small")];
        want.extend(file.encode_to_vec());
        want.extend([0x20, 1]);
        assert_eq!(result.encode_to_vec(), want);
    }

    #[test]
    fn unknown_fields_are_skipped() {
        let mut bytes = ActionResult {
            output_files: vec![OutputFile::of("entry.json", b"{}")],
            exit_code: 0,
        }
        .encode_to_vec();
        // execution_metadata = 9 (a message), as bazel-remote adds it.
        bytes.extend([0x4a, 2, 0x0a, 0]);
        let decoded = ActionResult::decode(bytes.as_slice()).expect("decodes");
        assert_eq!(decoded.output_files[0].path, "entry.json");
    }
}
