//! A producer built against `discern:producer@1.0.0`, a contract version this host does not
//! support: the host must refuse it before linking, saying which side to upgrade.

#[cfg(target_arch = "wasm32")]
mod bindings {
    wit_bindgen::generate!({ path: "wit", world: "producer" });

    use exports::discern::producer::measure::{Guest, Info, Metric};

    struct Future;

    impl Guest for Future {
        fn describe() -> Info {
            Info {
                name: "future".into(),
                version: "2.0.0".into(),
                metrics: vec!["ok".into()],
                config_schema: None,
            }
        }

        fn run(_config: String) -> Result<Vec<Metric>, String> {
            Ok(vec![Metric {
                name: "ok".into(),
                value: 1.0,
                findings: vec![],
            }])
        }
    }

    export!(Future);
}
