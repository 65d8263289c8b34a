//! Where a value came from, for error messages: a scenario file's `server:`, `client:` or
//! `pd:` section, or a command-line flag. Resolution checks the merged flags and names the
//! flag (`--tp: field ...`); [`attribute`] renames such an error after the file's field
//! (`my.yaml: field server.tp: ...`) when the command line did not set that flag and the file
//! did, so a bad value in a file is never blamed on a flag the user did not type.
use super::pd::PdFlags;
use super::server_flags::ServerFlags;
use super::workload::{ClientFlags, ScenarioFile};
use crate::error::Error;
use serde::Serialize;
use serde_json::Value;

/// The dotted path under `value` of the key `key` holding a set value (not null, not
/// `false`), searching nested sections (`speculative`, `expert-parallel`, `vllm`) too.
fn set_key_path(value: &Value, key: &str) -> Option<String> {
    let Value::Object(map) = value else {
        return None;
    };
    if let Some(v) = map.get(key) {
        if !matches!(v, Value::Null | Value::Bool(false)) {
            return Some(key.to_string());
        }
    }
    map.iter().find_map(|(name, v)| {
        v.is_object()
            .then(|| set_key_path(v, key).map(|p| format!("{name}.{p}")))
            .flatten()
    })
}

fn as_json(flags: &impl Serialize) -> Value {
    serde_json::to_value(flags).unwrap_or(Value::Null)
}

/// The flag an error names (`--random-input-len` of `--random-input-len: field ...`, or of
/// `--backend foo`), as the kebab-case key the flags serialise it under.
fn flag_key(source_name: &str) -> Option<&str> {
    let flag = source_name.strip_prefix("--")?;
    let key = flag.split([' ', '=']).next()?;
    (!key.is_empty()).then_some(key)
}

/// `err`, renamed after `file`'s field when it names a flag that the command line (`server`,
/// `client`, `pd`) left unset and the file's section set; any other error unchanged.
pub fn attribute(
    err: Error,
    file: &ScenarioFile,
    server: &ServerFlags,
    client: &ClientFlags,
    pd: &PdFlags,
) -> Error {
    let Error::Invalid {
        source_name,
        field,
        reason,
    } = err
    else {
        return err;
    };
    let unchanged = |source_name: String| Error::Invalid {
        source_name,
        field: field.clone(),
        reason: reason.clone(),
    };
    let (Some(path), Some(key)) = (file.path.as_ref(), flag_key(&source_name)) else {
        return unchanged(source_name);
    };
    let given_on_command_line = [as_json(server), as_json(client), as_json(pd)]
        .iter()
        .any(|v| set_key_path(v, key).is_some());
    if given_on_command_line {
        return unchanged(source_name);
    }
    let sections = [
        ("server", as_json(&file.server)),
        ("client", as_json(&file.client)),
        ("pd", as_json(&file.pd)),
    ];
    match sections
        .iter()
        .find_map(|(name, v)| set_key_path(v, key).map(|p| format!("{name}.{p}")))
    {
        Some(file_field) => Error::Invalid {
            source_name: path.display().to_string(),
            field: file_field,
            reason,
        },
        None => unchanged(source_name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_keys_and_ignores_unset_ones() {
        let v = serde_json::json!({"tp": null, "flag": false, "vllm": {"burstiness": 2.0}});
        assert_eq!(set_key_path(&v, "tp"), None);
        assert_eq!(set_key_path(&v, "flag"), None);
        assert_eq!(
            set_key_path(&v, "burstiness").as_deref(),
            Some("vllm.burstiness")
        );
    }

    #[test]
    fn reads_the_flag_of_an_error_source() {
        assert_eq!(flag_key("--tp"), Some("tp"));
        assert_eq!(flag_key("--backend lmdeploy"), Some("backend"));
        assert_eq!(
            flag_key("--num-gpu-blocks-override=3"),
            Some("num-gpu-blocks-override")
        );
        assert_eq!(flag_key("scenario"), None);
        assert_eq!(flag_key("--"), None);
    }
}
