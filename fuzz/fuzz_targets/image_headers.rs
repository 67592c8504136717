//! Image files: arbitrary bytes as a tool or a user hands them to `Image::detect` and
//! `Image::from_bytes`, whose header reading (size in pixels, frames) walks the file's own
//! lengths and offsets.
//!
//! Asserts, beyond "no panic": an image is made only of bytes whose signature names its
//! type, and of every type only that one; a size read has no side of 0; the image read
//! back from its base64 (as a transcript is) is the same image, with the same size and
//! animation.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolsmith::{IMAGE_MEDIA_TYPES, Image, MAX_IMAGE_BASE64_LEN};

/// The most bytes whose padded base64 fits in `MAX_IMAGE_BASE64_LEN`.
const MAX_BYTES: usize = MAX_IMAGE_BASE64_LEN / 4 * 3;

fuzz_target!(|data: &[u8]| {
    let named = Image::media_type_of(data);
    match Image::detect(data) {
        Ok(image) => {
            assert_eq!(Some(image.media_type()), named);
            if let Some((width, height)) = image.dimensions() {
                assert!(width > 0 && height > 0, "a side of 0: {width}x{height}");
            }
            let again = Image::from_base64(image.media_type(), image.data()).unwrap();
            assert_eq!(again, image);
            assert_eq!(again.dimensions(), image.dimensions());
            assert_eq!(again.is_animated(), image.is_animated());
            assert_eq!(again.byte_len(), data.len());
        }
        Err(_) => assert!(named.is_none() || data.len() > MAX_BYTES),
    }
    for media_type in IMAGE_MEDIA_TYPES {
        let made = Image::from_bytes(media_type, data);
        assert_eq!(
            made.is_ok(),
            named == Some(media_type) && data.len() <= MAX_BYTES,
            "{media_type}"
        );
    }
});
