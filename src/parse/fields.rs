//! The fields a grammar rule extracted from one line, and their typed readers.
//!
//! Every event builder reads its fields through these methods, so "the field is missing" and "the field is
//! not a size" are worded once, and no builder module needs another builder module's helpers.

use super::values::{parse_int, parse_mib_truncated, parse_size};
use crate::model::Quantity;

/// Why a matched line could not become an event.
pub type BuildError = String;

/// Fields extracted from one line, in extraction order: named regex groups, constants, then logfmt pairs.
#[derive(Debug, Default, Clone)]
pub struct Fields {
    pairs: Vec<(String, String)>,
    /// The names a builder asked for, so a test can hold each kind's builder to the fields its spec lists.
    #[cfg(test)]
    asked: std::cell::RefCell<Vec<String>>,
}

impl Fields {
    /// Fields from name/value pairs, in extraction order.
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Fields {
        Fields {
            pairs,
            #[cfg(test)]
            asked: Default::default(),
        }
    }

    /// The first value of a field.
    pub fn get(&self, name: &str) -> Option<&str> {
        #[cfg(test)]
        self.asked.borrow_mut().push(name.to_string());
        self.pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Add a field (tests build fields by hand).
    pub fn push(&mut self, name: &str, value: &str) {
        self.pairs.push((name.to_string(), value.to_string()));
    }

    /// Every field, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Every name asked for so far (tests only).
    #[cfg(test)]
    pub fn asked(&self) -> Vec<String> {
        self.asked.borrow().clone()
    }

    /// A field the event cannot do without.
    pub fn need(&self, name: &str) -> Result<&str, BuildError> {
        self.get(name)
            .ok_or_else(|| format!("field '{name}' missing"))
    }

    /// A required size (`4156.00 MiB`, `6.8 GiB`).
    pub fn size(&self, name: &str) -> Result<Quantity, BuildError> {
        let text = self.need(name)?;
        parse_size(text).ok_or_else(|| format!("field '{name}' is not a size: '{text}'"))
    }

    /// A size, when the field is there and reads as one.
    pub fn opt_size(&self, name: &str) -> Option<Quantity> {
        self.get(name).and_then(parse_size)
    }

    /// A required whole number.
    pub fn int(&self, name: &str) -> Result<i64, BuildError> {
        let text = self.need(name)?;
        parse_int(text).ok_or_else(|| format!("field '{name}' is not a whole number: '{text}'"))
    }

    /// A whole number, when the field is there and reads as one.
    pub fn opt_int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(parse_int)
    }

    /// A required figure in whole MiB, truncated as llama.cpp prints them (`4156`).
    pub fn mib(&self, name: &str) -> Result<Quantity, BuildError> {
        let text = self.need(name)?;
        parse_mib_truncated(text)
            .ok_or_else(|| format!("field '{name}' is not a MiB figure: '{text}'"))
    }

    /// A MiB figure, when the field is there and reads as one.
    pub fn opt_mib(&self, name: &str) -> Option<Quantity> {
        self.get(name).and_then(parse_mib_truncated)
    }

    /// A field's text, trimmed; none when it is missing or blank.
    pub fn opt_text(&self, name: &str) -> Option<String> {
        self.get(name)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    }
}
