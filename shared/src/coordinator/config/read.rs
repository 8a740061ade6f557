//! A strict reader over a parsed JSON value: every object lists the keys it allows, `null`
//! means absent, and every error names the dotted path of the offending key.

use std::path::PathBuf;

use serde_json::Map;
use serde_json::Value;

use super::ConfigError;

/// Returns an error for the key at `key`.
pub(super) fn err(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        key: key.into(),
        message: message.into(),
    }
}

/// Returns `path.key`, or `key` at the root.
pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Returns the entries of an open map (keys chosen by the operator); `null` is empty.
pub(super) fn entries<'a>(
    key: &str,
    value: Option<&'a Value>,
) -> Result<Vec<(&'a String, &'a Value)>, ConfigError> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => Ok(map.iter().collect()),
        Some(_) => Err(err(key, "expected an object")),
    }
}

/// One JSON object whose keys were checked against the keys it allows.
pub(super) struct Obj<'a> {
    path: String,
    map: &'a Map<String, Value>,
}

impl<'a> Obj<'a> {
    /// Returns the object at `path`, refusing any key not in `allowed`.
    pub(super) fn new(path: &str, value: &'a Value, allowed: &[&str]) -> Result<Self, ConfigError> {
        let Value::Object(map) = value else {
            return Err(err(path, "expected an object"));
        };
        if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(err(
                join(path, unknown),
                format!("unknown key (expected one of: {})", allowed.join(", ")),
            ));
        }
        Ok(Self {
            path: path.to_owned(),
            map,
        })
    }

    /// Returns the dotted path of `key` in this object.
    pub(super) fn key(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// Returns the value of `key`, treating `null` as absent.
    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// Returns the value of a required key.
    pub(super) fn required(&self, key: &str) -> Result<&'a Value, ConfigError> {
        self.get(key)
            .ok_or_else(|| err(self.key(key), "missing required key"))
    }

    /// Returns a required non-empty single-line string.
    pub(super) fn string(&self, key: &str) -> Result<String, ConfigError> {
        text(&self.key(key), self.required(key)?)
    }

    /// Returns an optional non-empty single-line string.
    pub(super) fn opt_string(&self, key: &str) -> Result<Option<String>, ConfigError> {
        self.get(key).map(|v| text(&self.key(key), v)).transpose()
    }

    /// Returns a required absolute path.
    pub(super) fn abs_path(&self, key: &str) -> Result<PathBuf, ConfigError> {
        absolute(&self.key(key), self.string(key)?)
    }

    /// Returns an optional absolute path.
    pub(super) fn opt_abs_path(&self, key: &str) -> Result<Option<PathBuf>, ConfigError> {
        self.opt_string(key)?
            .map(|p| absolute(&self.key(key), p))
            .transpose()
    }

    /// Returns a required positive number of seconds.
    pub(super) fn seconds(&self, key: &str) -> Result<u64, ConfigError> {
        match self.required(key)?.as_u64() {
            Some(0) => Err(err(self.key(key), "must be at least 1 second")),
            Some(n) => Ok(n),
            None => Err(err(
                self.key(key),
                "expected a positive whole number of seconds",
            )),
        }
    }

    /// Returns an optional positive number of seconds.
    pub(super) fn opt_seconds(&self, key: &str) -> Result<Option<u64>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(_) => self.seconds(key).map(Some),
        }
    }

    /// Returns a required argv whose first element is an absolute path.
    pub(super) fn argv(&self, key: &str) -> Result<Vec<String>, ConfigError> {
        argv(&self.key(key), self.required(key)?)
    }

    /// Returns a required list of non-empty single-line strings.
    pub(super) fn strings(&self, key: &str) -> Result<Vec<String>, ConfigError> {
        strings(&self.key(key), self.required(key)?)
    }
}

/// Returns a non-empty single-line string.
pub(super) fn text(key: &str, value: &Value) -> Result<String, ConfigError> {
    match value {
        Value::String(s) if s.trim().is_empty() => Err(err(key, "must not be empty")),
        Value::String(s) if s.chars().any(char::is_control) => {
            Err(err(key, "must not contain control characters"))
        }
        Value::String(s) => Ok(s.clone()),
        _ => Err(err(key, "expected a string")),
    }
}

/// Returns a list of non-empty single-line strings.
pub(super) fn strings(key: &str, value: &Value) -> Result<Vec<String>, ConfigError> {
    let Value::Array(items) = value else {
        return Err(err(key, "expected an array of strings"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| text(&format!("{key}[{i}]"), item))
        .collect()
}

/// Returns an argv: a non-empty list of strings whose first element is an absolute path.
pub(super) fn argv(key: &str, value: &Value) -> Result<Vec<String>, ConfigError> {
    let Value::Array(items) = value else {
        return Err(err(key, "expected an argv array of strings"));
    };
    let Some(first) = items.first() else {
        return Err(err(key, "argv must not be empty"));
    };
    let program = text(&format!("{key}[0]"), first)?;
    if !is_absolute(&program) {
        return Err(err(key, "argv[0] must be an absolute path"));
    }
    let mut out = vec![program];
    for (i, item) in items.iter().enumerate().skip(1) {
        match item {
            // Arguments may be empty (`--flag ""`), but never control characters.
            Value::String(s) if s.contains('\0') => {
                return Err(err(format!("{key}[{i}]"), "must not contain a NUL byte"))
            }
            Value::String(s) => out.push(s.clone()),
            _ => return Err(err(format!("{key}[{i}]"), "expected a string")),
        }
    }
    Ok(out)
}

/// Reports whether `path` is absolute; the coordinator runs on Unix-like hosts.
pub(super) fn is_absolute(path: &str) -> bool {
    path.starts_with('/')
}

fn absolute(key: &str, path: String) -> Result<PathBuf, ConfigError> {
    if is_absolute(&path) {
        Ok(PathBuf::from(path))
    } else {
        Err(err(key, "must be an absolute path"))
    }
}

/// Returns a non-negative, finite number (US dollars, prices per million tokens).
pub(super) fn amount(key: &str, value: &Value) -> Result<f64, ConfigError> {
    match value.as_f64() {
        Some(n) if n.is_finite() && n >= 0.0 => Ok(n),
        _ => Err(err(key, "expected a non-negative number")),
    }
}

impl Obj<'_> {
    /// Returns an optional non-negative amount.
    pub(super) fn opt_amount(&self, key: &str) -> Result<Option<f64>, ConfigError> {
        self.get(key).map(|v| amount(&self.key(key), v)).transpose()
    }

    /// Returns an optional positive whole number (a token count).
    pub(super) fn opt_count(&self, key: &str) -> Result<Option<u64>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if n > 0 => Ok(Some(n)),
                _ => Err(err(self.key(key), "expected a positive whole number")),
            },
        }
    }
}
