//! Enum names from serde: the name a closed vocabulary (an enum of unit variants) is
//! stored, sent and printed under is the one its `Serialize` derive spells, written once in
//! its `rename`/`rename_all` attributes instead of in a hand-written `as_str` table.
//!
//! serde hands a unit variant's name to `Serializer::serialize_unit_variant` as a
//! `&'static str`, so [`VariantNameSerializer`] returns it as is: no allocation and no JSON.

use std::fmt;

use serde::ser::Impossible;
use serde::Serialize;
use serde::Serializer;

/// An enum of unit variants whose names are its serde names.
///
/// Implement it (with no items) only on enums whose every variant is a unit variant; a test
/// per enum lists every variant's name, so a rename shows up as a failing test.
pub trait WireName: Serialize {
    /// Returns the variant's name as serde writes it (`pr_gates_grok`, `no-change`, …).
    fn wire_name(&self) -> &'static str {
        variant_name(self).expect("WireName is implemented only on enums of unit variants")
    }
}

/// Returns the name serde gives `value`, when it serialises as a unit enum variant.
pub fn variant_name<T: Serialize + ?Sized>(value: &T) -> Result<&'static str, NameError> {
    value.serialize(VariantNameSerializer)
}

/// Why a value has no variant name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The value serialises as something other than a unit enum variant.
    #[error("{found} is not a unit enum variant")]
    NotUnitVariant {
        /// What the value serialises as (`a string`, `a struct`, …).
        found: &'static str,
    },
    /// The value's own `Serialize` impl failed.
    #[error("{message}")]
    Custom {
        /// What the impl said.
        message: String,
    },
}

impl serde::ser::Error for NameError {
    fn custom<M: fmt::Display>(message: M) -> Self {
        NameError::Custom {
            message: message.to_string(),
        }
    }
}

/// A serializer that accepts only unit enum variants and returns their names.
pub struct VariantNameSerializer;

/// Rejects every scalar a unit variant is not.
macro_rules! reject {
    ($($method:ident($ty:ty) => $found:literal,)*) => {
        $(fn $method(self, _: $ty) -> Result<&'static str, NameError> {
            Err(NameError::NotUnitVariant { found: $found })
        })*
    };
}

/// The compound serializers, never built: every compound value is refused up front.
type Never = Impossible<&'static str, NameError>;

impl Serializer for VariantNameSerializer {
    type Ok = &'static str;
    type Error = NameError;
    type SerializeSeq = Never;
    type SerializeTuple = Never;
    type SerializeTupleStruct = Never;
    type SerializeTupleVariant = Never;
    type SerializeMap = Never;
    type SerializeStruct = Never;
    type SerializeStructVariant = Never;

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<&'static str, NameError> {
        Ok(variant)
    }

    reject! {
        serialize_bool(bool) => "a bool",
        serialize_i8(i8) => "a number",
        serialize_i16(i16) => "a number",
        serialize_i32(i32) => "a number",
        serialize_i64(i64) => "a number",
        serialize_u8(u8) => "a number",
        serialize_u16(u16) => "a number",
        serialize_u32(u32) => "a number",
        serialize_u64(u64) => "a number",
        serialize_f32(f32) => "a number",
        serialize_f64(f64) => "a number",
        serialize_char(char) => "a char",
        serialize_str(&str) => "a string",
        serialize_bytes(&[u8]) => "bytes",
        serialize_unit_struct(&'static str) => "a unit struct",
    }

    fn serialize_none(self) -> Result<&'static str, NameError> {
        Err(NameError::NotUnitVariant { found: "an option" })
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<&'static str, NameError> {
        Err(NameError::NotUnitVariant { found: "an option" })
    }

    fn serialize_unit(self) -> Result<&'static str, NameError> {
        Err(NameError::NotUnitVariant { found: "a unit" })
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<&'static str, NameError> {
        Err(NameError::NotUnitVariant {
            found: "a newtype struct",
        })
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<&'static str, NameError> {
        Err(NameError::NotUnitVariant {
            found: "a newtype variant",
        })
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Never, NameError> {
        Err(NameError::NotUnitVariant {
            found: "a sequence",
        })
    }

    fn serialize_tuple(self, _: usize) -> Result<Never, NameError> {
        Err(NameError::NotUnitVariant { found: "a tuple" })
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Never, NameError> {
        Err(NameError::NotUnitVariant {
            found: "a tuple struct",
        })
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Never, NameError> {
        Err(NameError::NotUnitVariant {
            found: "a tuple variant",
        })
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Never, NameError> {
        Err(NameError::NotUnitVariant { found: "a map" })
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Never, NameError> {
        Err(NameError::NotUnitVariant { found: "a struct" })
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Never, NameError> {
        Err(NameError::NotUnitVariant {
            found: "a struct variant",
        })
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use super::*;

    #[derive(Serialize)]
    #[serde(rename_all = "kebab-case")]
    enum Sample {
        NoChange,
        #[serde(rename = "grok:reviewer")]
        Renamed,
        Tuple(u8),
    }

    impl WireName for Sample {}

    #[test]
    fn unit_variants_are_named_as_serde_writes_them() {
        assert_eq!(Sample::NoChange.wire_name(), "no-change");
        assert_eq!(Sample::Renamed.wire_name(), "grok:reviewer");
        let json = serde_json::to_string(&Sample::NoChange).expect("json");
        assert_eq!(json, format!("\"{}\"", Sample::NoChange.wire_name()));
    }

    #[test]
    fn anything_else_has_no_variant_name() {
        assert_eq!(
            variant_name(&Sample::Tuple(1)),
            Err(NameError::NotUnitVariant {
                found: "a newtype variant"
            })
        );
        assert_eq!(
            variant_name("text"),
            Err(NameError::NotUnitVariant { found: "a string" })
        );
        assert_eq!(
            variant_name(&Some(1)),
            Err(NameError::NotUnitVariant { found: "an option" })
        );
        assert_eq!(
            variant_name(&[1, 2]),
            Err(NameError::NotUnitVariant { found: "a tuple" })
        );
    }
}
