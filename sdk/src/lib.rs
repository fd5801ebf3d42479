#![doc = include_str!("../README.md")]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

mod config;
mod count;
mod error;
mod finding;
mod snapshot;
pub mod testing;
mod types;

pub use config::Config;
pub use count::{TextCounter, TextStats, count_lines, count_words, is_binary, is_word_separator};
pub use error::Error;
pub use finding::fingerprint;
pub use snapshot::{Entry, Snapshot};
pub use types::{Finding, Info, MAX_MESSAGE_BYTES, Metric, Severity};

/// The producer an author writes: what it is, and how it measures a snapshot.
pub trait Producer {
    /// Name, version and the metrics [`Producer::run`] can emit.
    fn describe() -> Info;

    /// Measure `snapshot` with the Standard's `config` table.
    fn run(snapshot: &dyn Snapshot, config: &Config) -> Result<Vec<Metric>, Error>;
}

/// The generated WIT bindings (wasm32 only). Not part of the public API.
#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit/v0.2",
        world: "producer",
        pub_export_macro: true,
        export_macro_name: "__export_producer_bindings",
        default_bindings_module: "::discern_sdk::bindings",
    });
}

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod guest;

/// Export `$ty` (a type implementing [`Producer`]) as this component's producer.
///
/// Invoke it once, at the crate root of a `cdylib` crate built for `wasm32-wasip2`. On
/// other targets it expands to nothing, so the crate's unit tests still build natively.
#[macro_export]
macro_rules! export_producer {
    ($ty:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct DiscernProducerExport;
            impl $crate::bindings::exports::discern::producer::measure::Guest
                for DiscernProducerExport
            {
                fn describe() -> $crate::bindings::exports::discern::producer::measure::Info {
                    $crate::guest::describe::<$ty>()
                }
                fn run(
                    config: ::std::string::String,
                ) -> ::std::result::Result<
                    ::std::vec::Vec<$crate::bindings::exports::discern::producer::measure::Metric>,
                    ::std::string::String,
                > {
                    $crate::guest::run::<$ty>(config)
                }
            }
            $crate::bindings::__export_producer_bindings!(
                DiscernProducerExport with_types_in $crate::bindings
            );
        };
    };
}
