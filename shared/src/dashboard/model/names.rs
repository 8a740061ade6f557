//! Enum names from serde: the name a unit variant serialises as (its `rename_all` applied),
//! so that each name of the model's enums is written once, in the type's serde attributes,
//! and `as_str` (or a parse) reads it from there.

use serde::de::value::Error as NameError;
use serde::de::value::StrDeserializer;
use serde::de::DeserializeOwned;
use serde::ser::Impossible;
use serde::Serialize;
use serde::Serializer;

/// Returns the name the unit variant `value` serialises as (empty for a value that is not a
/// unit variant, which none of the model's named enums has).
pub(crate) fn serde_name<T: Serialize>(value: &T) -> &'static str {
    value.serialize(VariantName).unwrap_or_default()
}

/// Returns the unit variant whose serde name is `name`, if there is one.
pub(crate) fn from_serde_name<T: DeserializeOwned>(name: &str) -> Option<T> {
    T::deserialize(StrDeserializer::<NameError>::new(name)).ok()
}

/// A serializer that accepts only a unit variant and answers its name.
struct VariantName;

/// What [`VariantName`] answers for anything but a unit variant.
#[derive(Debug)]
struct NotAUnitVariant;

impl std::fmt::Display for NotAUnitVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a unit variant")
    }
}

impl std::error::Error for NotAUnitVariant {}

impl serde::ser::Error for NotAUnitVariant {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        NotAUnitVariant
    }
}

/// Refuses the serializer methods for values that are not unit variants.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<&'static str, NotAUnitVariant> {
            Err(NotAUnitVariant)
        })*
    };
}

impl Serializer for VariantName {
    type Ok = &'static str;
    type Error = NotAUnitVariant;
    type SerializeSeq = Impossible<&'static str, NotAUnitVariant>;
    type SerializeTuple = Impossible<&'static str, NotAUnitVariant>;
    type SerializeTupleStruct = Impossible<&'static str, NotAUnitVariant>;
    type SerializeTupleVariant = Impossible<&'static str, NotAUnitVariant>;
    type SerializeMap = Impossible<&'static str, NotAUnitVariant>;
    type SerializeStruct = Impossible<&'static str, NotAUnitVariant>;
    type SerializeStructVariant = Impossible<&'static str, NotAUnitVariant>;

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<&'static str, NotAUnitVariant> {
        Ok(variant)
    }

    refuse!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
    );

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<&'static str, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<&'static str, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<&'static str, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }

    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::model::LivenessView;
    use crate::dashboard::model::Signal;

    #[test]
    fn names_are_the_serialised_ones() {
        assert_eq!(serde_name(&LivenessView::NoHeartbeat), "no-heartbeat");
        assert_eq!(serde_name(&Signal::R1), "R1");
        assert_eq!(serde_name(&7), "");
        assert_eq!(
            from_serde_name::<LivenessView>("no-heartbeat"),
            Some(LivenessView::NoHeartbeat)
        );
        assert_eq!(from_serde_name::<Signal>("H0"), None);
    }
}
