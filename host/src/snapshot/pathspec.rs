//! The pathspec dialect producers, `per` extents and `inputs` use: git's pathspecs read with
//! `:(glob)` magic. One implementation, `discern-pathspec` (`sdk/pathspec/`), shared with the
//! SDK's in-memory test snapshot so that a producer's unit tests and the host agree.

pub use discern_pathspec::Pathspec;
pub(crate) use discern_pathspec::PathspecError;
