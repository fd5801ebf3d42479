//! Any bytes as an MCP tool call's `arguments`: decoding against each tool's input schema
//! never panics, and what is accepted is an object without `null` values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

use discern::lifecycle::{accept, done, map, start, update, wait};
use discern::verbs::parse;

fn holds<T: serde::de::DeserializeOwned + schemars::JsonSchema>(arguments: &Value) {
    if parse::<T>("fuzz", arguments.clone()).is_ok() {
        let object = arguments.as_object().expect("accepted arguments are an object");
        assert!(object.values().all(|v| !v.is_null()), "null accepted: {arguments}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(arguments) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    holds::<discern::status::StatusRequest>(&arguments);
    holds::<start::StartRequest>(&arguments);
    holds::<done::DoneRequest>(&arguments);
    holds::<update::UpdateRequest>(&arguments);
    holds::<wait::AwaitRequest>(&arguments);
    holds::<accept::AcceptRequest>(&arguments);
    holds::<map::MapRequest>(&arguments);
    holds::<discern::standards::MeasureRequest>(&arguments);
    holds::<discern::proposals::ProposeRequest>(&arguments);
});
