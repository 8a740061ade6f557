//! The name serde gives a unit variant (`#[serde(rename_all = …)]`, `#[serde(rename = …)]`),
//! so an enum whose variants are written as words spells each word once, in its serde
//! attributes, instead of again in a hand-written `as_str` table.

use std::fmt;

use serde::de::value::Error as NameError;
use serde::de::value::StrDeserializer;
use serde::de::DeserializeOwned;
use serde::ser::Impossible;
use serde::Serialize;
use serde::Serializer;

/// Returns the serde name of `value` when it serialises as a unit variant; empty for any
/// other value (none of the enums that call this has one).
pub fn serde_name<T: Serialize + ?Sized>(value: &T) -> &'static str {
    value.serialize(VariantName).unwrap_or_default()
}

/// An enum of unit variants whose names are its serde names: `wire_name()` reads the name
/// its `rename`/`rename_all` attributes give.
///
/// Implement it (with no items) only on enums whose every variant is a unit variant; a test
/// per enum lists every variant's name, so a rename shows up as a failing test.
pub trait WireName: Serialize {
    /// Returns the variant's name as serde writes it (`pr_gates_grok`, `no-change`, …).
    fn wire_name(&self) -> &'static str {
        serde_name(self)
    }
}

/// Returns the unit variant whose serde name is `name`, if there is one.
pub fn from_serde_name<T: DeserializeOwned>(name: &str) -> Option<T> {
    T::deserialize(StrDeserializer::<NameError>::new(name)).ok()
}

/// Why a value has no variant name: it is not a unit variant.
#[derive(Debug)]
struct NotUnitVariant;

impl fmt::Display for NotUnitVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a unit variant")
    }
}

impl std::error::Error for NotUnitVariant {}

impl serde::ser::Error for NotUnitVariant {
    fn custom<M: fmt::Display>(_: M) -> Self {
        NotUnitVariant
    }
}

/// A serializer that accepts only a unit variant and returns its name.
struct VariantName;

/// Declares the serializer methods that refuse their value.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*);)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<&'static str, NotUnitVariant> {
            Err(NotUnitVariant)
        })*
    };
}

impl Serializer for VariantName {
    type Ok = &'static str;
    type Error = NotUnitVariant;
    type SerializeSeq = Impossible<&'static str, NotUnitVariant>;
    type SerializeTuple = Impossible<&'static str, NotUnitVariant>;
    type SerializeTupleStruct = Impossible<&'static str, NotUnitVariant>;
    type SerializeTupleVariant = Impossible<&'static str, NotUnitVariant>;
    type SerializeMap = Impossible<&'static str, NotUnitVariant>;
    type SerializeStruct = Impossible<&'static str, NotUnitVariant>;
    type SerializeStructVariant = Impossible<&'static str, NotUnitVariant>;

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<&'static str, NotUnitVariant> {
        Ok(variant)
    }

    refuse! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_char(char);
        serialize_str(&str);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<&'static str, NotUnitVariant> {
        Err(NotUnitVariant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<&'static str, NotUnitVariant> {
        Err(NotUnitVariant)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<&'static str, NotUnitVariant> {
        Err(NotUnitVariant)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotUnitVariant> {
        Err(NotUnitVariant)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotUnitVariant> {
        Err(NotUnitVariant)
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotUnitVariant> {
        Err(NotUnitVariant)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotUnitVariant> {
        Err(NotUnitVariant)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotUnitVariant> {
        Err(NotUnitVariant)
    }

    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, NotUnitVariant> {
        Err(NotUnitVariant)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotUnitVariant> {
        Err(NotUnitVariant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Word {
        UpToDate,
        #[serde(rename = "repository_config")]
        Stored,
        Other(u8),
    }

    #[test]
    fn names_come_from_serde() {
        assert_eq!(serde_name(&Word::UpToDate), "up_to_date");
        assert_eq!(serde_name(&Word::Stored), "repository_config");
        assert_eq!(serde_name(&Word::Other(1)), "");
        assert_eq!(serde_name(&5), "");
    }

    impl WireName for Word {}

    #[test]
    fn a_wire_name_is_the_serde_name() {
        assert_eq!(Word::UpToDate.wire_name(), "up_to_date");
        let json = serde_json::to_string(&Word::Stored).expect("json");
        assert_eq!(json, format!("\"{}\"", Word::Stored.wire_name()));
    }

    #[test]
    fn names_read_back_as_their_variants() {
        assert_eq!(from_serde_name::<Word>("up_to_date"), Some(Word::UpToDate));
        assert_eq!(
            from_serde_name::<Word>("repository_config"),
            Some(Word::Stored)
        );
        assert_eq!(from_serde_name::<Word>("stored"), None);
        assert_eq!(from_serde_name::<Word>("other"), None);
    }
}
