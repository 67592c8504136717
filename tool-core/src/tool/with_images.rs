//! [`WithImages`]: a typed result with images beside it.

use serde::Serialize;

use crate::{Image, ToolCallResult};

/// A tool's typed result with images beside it: a browser tool's `{url, title}` and the
/// page's screenshot. Returned from a `#[tool_fn]` function (alone or as a `Result`'s
/// success), it is a [`ToolCallResult::json_with_images`]: the value is the tool's
/// structured result, and the tool's `returns` schema is `T`'s (when `T: JsonSchema`; a
/// `serde_json::Value` gives none, as it does alone), so every result is checked against it
/// and an MCP server serves the value as `structuredContent`. The model is given the
/// value's JSON text, then the images.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolsmith::{Image, ToolArguments, ToolCallManager, WithImages, tool_fn};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Page {
///     url: String,
///     title: String,
/// }
///
/// /// Open a page and look at it.
/// #[tool_fn]
/// async fn browse(url: String) -> Result<WithImages<Page>, String> {
///     let shot = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").map_err(|e| e.to_string())?;
///     Ok(WithImages::new(Page { url, title: "Example Domain".into() }, [shot]))
/// }
///
/// # futures::executor::block_on(async {
/// let manager = ToolCallManager::new("s");
/// manager.register(Arc::new(Browse)).unwrap();
/// // The tool's `returns` schema is `Page`'s.
/// let returns = manager.get_def("browse").unwrap().result_schema().unwrap();
/// assert_eq!(returns["required"], json!(["url", "title"]));
///
/// let arguments = ToolArguments::try_from(json!({"url": "https://example.com"})).unwrap();
/// let result = manager.execute_call("browse", &arguments).await.unwrap();
/// assert_eq!(
///     result.content.json_value().as_deref(),
///     Some(&json!({"url": "https://example.com", "title": "Example Domain"}))
/// );
/// assert_eq!(result.content.images().count(), 1);
/// # });
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct WithImages<T> {
    /// The structured result.
    pub value: T,
    /// The images given after it, in order.
    pub images: Vec<Image>,
}

impl<T> WithImages<T> {
    /// `value` with `images` beside it.
    pub fn new(value: T, images: impl IntoIterator<Item = Image>) -> Self {
        Self {
            value,
            images: images.into_iter().collect(),
        }
    }

    /// The same with `image` after the others.
    #[must_use]
    pub fn with_image(mut self, image: Image) -> Self {
        self.images.push(image);
        self
    }
}

impl<T: Serialize> WithImages<T> {
    /// The tool result it is ([`ToolCallResult::json_with_images`]); `Err` when the value
    /// cannot be serialised.
    pub fn into_result(self) -> Result<ToolCallResult, serde_json::Error> {
        let value = serde_json::to_value(&self.value)?;
        Ok(ToolCallResult::json_with_images(value, self.images))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::WithImages;
    use crate::{ContentPart, Image, JsonWithImages, UserModelContent};

    #[test]
    fn the_value_is_serialised_and_the_images_follow_in_order() {
        let png = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        let gif = Image::from_bytes("image/gif", b"GIF89a\x01\0").unwrap();
        let result = WithImages::new(vec![1, 2], [png.clone()])
            .with_image(gif.clone())
            .into_result()
            .unwrap();
        assert_eq!(
            result.content,
            UserModelContent::JsonWithImages(JsonWithImages::new(
                json!([1, 2]),
                [ContentPart::Image(png), ContentPart::Image(gif)]
            ))
        );
        assert!(!result.is_error());
    }

    #[test]
    fn a_value_that_cannot_be_serialised_is_an_error() {
        // JSON object keys must be strings.
        let keyed_by_pairs: BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
        let err = WithImages::new(keyed_by_pairs, [])
            .into_result()
            .unwrap_err();
        assert!(err.to_string().contains("key must be a string"), "{err}");
    }
}
