//! What an image's file says of itself before its pixels: its size in pixels and whether it
//! is animated, read from the header of each type an [`Image`](super::image::Image) may be
//! (PNG and APNG, GIF, JPEG, WebP), so that a model's limits can be checked before a
//! request is sent.
//!
//! Every read is bounded by the bytes given: a field past the end, a length that points
//! outside, an unknown block, each gives `None` (or stops the walk), never a panic.

/// An image's size in pixels and whether it has more than one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ImageHeader {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) animated: bool,
}

impl ImageHeader {
    /// A header of a size in pixels: `None` for a side of 0, which no provider reads as an
    /// image (JPEG's "height given later" included).
    fn sized(width: u32, height: u32, animated: bool) -> Option<Self> {
        (width > 0 && height > 0).then_some(Self {
            width,
            height,
            animated,
        })
    }
}

/// `n` bytes of `bytes` at `at`, when they are there.
fn field(bytes: &[u8], at: usize, n: usize) -> Option<&[u8]> {
    bytes.get(at..at.checked_add(n)?)
}

fn u16_be(bytes: &[u8], at: usize) -> Option<u32> {
    let b = field(bytes, at, 2)?;
    Some(u32::from(u16::from_be_bytes([b[0], b[1]])))
}

fn u16_le(bytes: &[u8], at: usize) -> Option<u32> {
    let b = field(bytes, at, 2)?;
    Some(u32::from(u16::from_le_bytes([b[0], b[1]])))
}

fn u24_le(bytes: &[u8], at: usize) -> Option<u32> {
    let b = field(bytes, at, 3)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], 0]))
}

fn u32_be(bytes: &[u8], at: usize) -> Option<u32> {
    let b = field(bytes, at, 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn u32_le(bytes: &[u8], at: usize) -> Option<u32> {
    let b = field(bytes, at, 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// A PNG's header: the size from IHDR, the first chunk (at byte 8); animated when an
/// `acTL` chunk (APNG, which must come before the first `IDAT`) counts more than one frame.
pub(crate) fn png(bytes: &[u8]) -> Option<ImageHeader> {
    if field(bytes, 12, 4)? != b"IHDR" {
        return None;
    }
    let (width, height) = (u32_be(bytes, 16)?, u32_be(bytes, 20)?);
    // Chunks: length (4), type (4), data (length), CRC (4).
    let mut at = 8usize;
    let mut animated = false;
    // `at + 4` and `at + 8` are within `bytes` once the length at `at` was read.
    while let Some(len) = u32_be(bytes, at) {
        let Some(kind) = field(bytes, at + 4, 4) else {
            break;
        };
        match kind {
            b"acTL" => {
                animated = u32_be(bytes, at + 8).is_some_and(|frames| frames > 1);
                break;
            }
            b"IDAT" | b"IEND" => break,
            _ => {}
        }
        let Some(next) = usize::try_from(len)
            .ok()
            .and_then(|len| at.checked_add(12)?.checked_add(len))
        else {
            break;
        };
        at = next;
    }
    ImageHeader::sized(width, height, animated)
}

/// A GIF's header: the logical screen's size (bytes 6..10); animated when its blocks hold
/// more than one image. The walk stops at the second image, the trailer, or a block it
/// cannot read (a file cut short counts the images it has).
pub(crate) fn gif(bytes: &[u8]) -> Option<ImageHeader> {
    let (width, height) = (u16_le(bytes, 6)?, u16_le(bytes, 8)?);
    let packed = *bytes.get(10)?;
    let mut at = 13 + colour_table_len(packed);
    let mut images = 0;
    while images < 2 {
        let Some(&introducer) = bytes.get(at) else {
            break;
        };
        at = match introducer {
            // An image descriptor: 9 bytes, its own colour table, the LZW code size, data.
            0x2C => {
                images += 1;
                let Some(&packed) = bytes.get(at + 9) else {
                    break;
                };
                match skip_sub_blocks(bytes, at + 10 + colour_table_len(packed) + 1) {
                    Some(next) => next,
                    None => break,
                }
            }
            // An extension: its label, then sub-blocks.
            0x21 => match skip_sub_blocks(bytes, at + 2) {
                Some(next) => next,
                None => break,
            },
            _ => break,
        };
    }
    ImageHeader::sized(width, height, images > 1)
}

/// The length of the colour table a GIF's packed byte announces (none without its top bit).
fn colour_table_len(packed: u8) -> usize {
    if packed & 0x80 == 0 {
        0
    } else {
        3 << ((packed & 0x07) + 1)
    }
}

/// Where the sub-blocks from `at` end (after the empty one), when they end within `bytes`.
fn skip_sub_blocks(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let len = usize::from(*bytes.get(at)?);
        at += 1;
        if len == 0 {
            return Some(at);
        }
        at += len;
    }
}

/// A JPEG's header: the size from its first start-of-frame marker (SOF0–SOF15 but DHT,
/// JPG and DAC), found by walking the segments before the scan; never animated.
pub(crate) fn jpeg(bytes: &[u8]) -> Option<ImageHeader> {
    let mut at = 2usize;
    loop {
        if *bytes.get(at)? != 0xFF {
            return None;
        }
        // Fill bytes: any number of 0xFF before a marker.
        let mut marker = *bytes.get(at + 1)?;
        at += 1;
        while marker == 0xFF {
            at += 1;
            marker = *bytes.get(at)?;
        }
        at += 1;
        match marker {
            // Markers without a length: TEM, RSTn, SOI.
            0x01 | 0xD0..=0xD8 => continue,
            // The end of the image, or its scan, before any frame: no size to read.
            0xD9 | 0xDA => return None,
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                // Length (2), precision (1), height (2), width (2).
                let (height, width) = (u16_be(bytes, at + 3)?, u16_be(bytes, at + 5)?);
                return ImageHeader::sized(width, height, false);
            }
            _ => at += usize::try_from(u16_be(bytes, at)?).ok()?,
        }
    }
}

/// A WebP's header, from its first chunk (at byte 12): `VP8X` (extended: the canvas size,
/// and the animation flag), `VP8L` (lossless) or `VP8 ` (lossy: the key frame's size).
pub(crate) fn webp(bytes: &[u8]) -> Option<ImageHeader> {
    let data = 20;
    match field(bytes, 12, 4)? {
        b"VP8X" => {
            let flags = *bytes.get(data)?;
            let width = u24_le(bytes, data + 4)? + 1;
            let height = u24_le(bytes, data + 7)? + 1;
            ImageHeader::sized(width, height, flags & 0x02 != 0)
        }
        b"VP8L" => {
            if *bytes.get(data)? != 0x2F {
                return None;
            }
            let bits = u32_le(bytes, data + 1)?;
            ImageHeader::sized((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, false)
        }
        b"VP8 " => {
            // A frame tag (3 bytes), the start code, then the 14-bit width and height.
            if field(bytes, data + 3, 3)? != [0x9D, 0x01, 0x2A] {
                return None;
            }
            let width = u16_le(bytes, data + 6)? & 0x3FFF;
            let height = u16_le(bytes, data + 8)? & 0x3FFF;
            ImageHeader::sized(width, height, false)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::Image;

    /// A PNG chunk: length, type, data, a CRC (not checked here, nor by the reader).
    fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut chunk = u32::try_from(data.len()).unwrap().to_be_bytes().to_vec();
        chunk.extend_from_slice(kind);
        chunk.extend_from_slice(data);
        chunk.extend_from_slice(&[0; 4]);
        chunk
    }

    /// A PNG of `width` x `height` (8-bit RGBA), with an `acTL` of `frames` when given.
    fn png_file(width: u32, height: u32, frames: Option<u32>) -> Vec<u8> {
        let mut ihdr = width.to_be_bytes().to_vec();
        ihdr.extend_from_slice(&height.to_be_bytes());
        ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
        let mut file = b"\x89PNG\r\n\x1a\n".to_vec();
        file.extend(chunk(b"IHDR", &ihdr));
        file.extend(chunk(b"sRGB", &[0]));
        if let Some(frames) = frames {
            let mut actl = frames.to_be_bytes().to_vec();
            actl.extend_from_slice(&0u32.to_be_bytes());
            file.extend(chunk(b"acTL", &actl));
        }
        file.extend(chunk(b"IDAT", &[0x78, 0x9C, 0x63, 0, 0, 0, 1, 0, 1]));
        file.extend(chunk(b"IEND", &[]));
        file
    }

    /// A GIF89a of `width` x `height` with a global colour table of 2 and `images` images
    /// of 1 x 1, each after a graphic control extension.
    fn gif_file(width: u16, height: u16, images: usize) -> Vec<u8> {
        let mut file = b"GIF89a".to_vec();
        file.extend_from_slice(&width.to_le_bytes());
        file.extend_from_slice(&height.to_le_bytes());
        file.extend_from_slice(&[0x80, 0, 0]);
        file.extend_from_slice(&[0, 0, 0, 0xFF, 0xFF, 0xFF]);
        for _ in 0..images {
            file.extend_from_slice(&[0x21, 0xF9, 4, 0, 10, 0, 0, 0]);
            file.extend_from_slice(&[0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0]);
            file.extend_from_slice(&[2, 2, 0x4C, 0x01, 0]);
        }
        file.push(0x3B);
        file
    }

    /// A JPEG whose frame (SOF `sof`) is `width` x `height`, after a JFIF APP0 and a DQT,
    /// its markers preceded by fill bytes when `fill`.
    fn jpeg_file(sof: u8, width: u16, height: u16, fill: bool) -> Vec<u8> {
        let mut file = vec![0xFF, 0xD8];
        file.extend_from_slice(&[0xFF, 0xE0, 0, 16]);
        file.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
        if fill {
            file.extend_from_slice(&[0xFF, 0xFF]);
        }
        file.extend_from_slice(&[0xFF, 0xDB, 0, 67, 0]);
        file.extend_from_slice(&[1; 64]);
        file.extend_from_slice(&[0xFF, sof, 0, 11, 8]);
        file.extend_from_slice(&height.to_be_bytes());
        file.extend_from_slice(&width.to_be_bytes());
        file.extend_from_slice(&[1, 1, 0x11, 0]);
        file.extend_from_slice(&[
            0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 0x3F, 0, 0xD2, 0xCF, 0xFF, 0xD9,
        ]);
        file
    }

    /// A WebP of one chunk `kind` holding `data`.
    fn webp_file(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut file = b"RIFF".to_vec();
        file.extend_from_slice(&u32::try_from(4 + 8 + data.len()).unwrap().to_le_bytes());
        file.extend_from_slice(b"WEBP");
        file.extend_from_slice(kind);
        file.extend_from_slice(&u32::try_from(data.len()).unwrap().to_le_bytes());
        file.extend_from_slice(data);
        file
    }

    fn vp8x(width: u32, height: u32, flags: u8) -> Vec<u8> {
        let mut data = vec![flags, 0, 0, 0];
        data.extend_from_slice(&(width - 1).to_le_bytes()[..3]);
        data.extend_from_slice(&(height - 1).to_le_bytes()[..3]);
        data
    }

    fn vp8l(width: u32, height: u32) -> Vec<u8> {
        let bits = (width - 1) | ((height - 1) << 14);
        let mut data = vec![0x2F];
        data.extend_from_slice(&bits.to_le_bytes());
        data
    }

    fn vp8(width: u16, height: u16) -> Vec<u8> {
        let mut data = vec![0x50, 0x02, 0x00, 0x9D, 0x01, 0x2A];
        data.extend_from_slice(&width.to_le_bytes());
        data.extend_from_slice(&height.to_le_bytes());
        data.extend_from_slice(&[0; 8]);
        data
    }

    fn read(media_type: &str, bytes: &[u8]) -> (Option<(u32, u32)>, bool) {
        let image = Image::from_bytes(media_type, bytes).unwrap();
        // Read back from its base64 and from a transcript, the header is read again.
        let back = Image::from_base64(media_type, image.data()).unwrap();
        let json = serde_json::to_value(&image).unwrap();
        assert_eq!(json.as_object().unwrap().len(), 2, "{json}");
        let read: Image = serde_json::from_value(json).unwrap();
        for other in [&back, &read] {
            assert_eq!(other.dimensions(), image.dimensions());
            assert_eq!(other.is_animated(), image.is_animated());
        }
        (image.dimensions(), image.is_animated())
    }

    #[test]
    fn png_and_apng() {
        assert_eq!(
            read("image/png", &png_file(9000, 4000, None)),
            (Some((9000, 4000)), false)
        );
        assert_eq!(
            read("image/png", &png_file(64, 32, Some(3))),
            (Some((64, 32)), true)
        );
        // An acTL of one frame shows one picture.
        assert_eq!(
            read("image/png", &png_file(64, 32, Some(1))),
            (Some((64, 32)), false)
        );
    }

    #[test]
    fn gif_still_and_animated() {
        assert_eq!(
            read("image/gif", &gif_file(2560, 1440, 1)),
            (Some((2560, 1440)), false)
        );
        assert_eq!(
            read("image/gif", &gif_file(100, 50, 3)),
            (Some((100, 50)), true)
        );
    }

    #[test]
    fn jpeg_baseline_progressive_and_filled() {
        assert_eq!(
            read("image/jpeg", &jpeg_file(0xC0, 2560, 1440, false)),
            (Some((2560, 1440)), false)
        );
        assert_eq!(
            read("image/jpeg", &jpeg_file(0xC2, 8001, 3, true)),
            (Some((8001, 3)), false)
        );
    }

    #[test]
    fn webp_lossy_lossless_and_extended() {
        let cases = [
            (
                webp_file(b"VP8 ", &vp8(1920, 1080)),
                (Some((1920, 1080)), false),
            ),
            (
                webp_file(b"VP8L", &vp8l(16383, 7)),
                (Some((16383, 7)), false),
            ),
            (
                webp_file(b"VP8X", &vp8x(9000, 200, 0x10)),
                (Some((9000, 200)), false),
            ),
            (
                webp_file(b"VP8X", &vp8x(300, 200, 0x02)),
                (Some((300, 200)), true),
            ),
        ];
        for (file, expected) in cases {
            assert_eq!(read("image/webp", &file), expected);
        }
    }

    #[test]
    fn malformed_or_cut_headers_leave_the_size_unknown() {
        let png_bytes = png_file(10, 10, None);
        let gif_bytes = gif_file(10, 10, 1);
        let jpeg_bytes = jpeg_file(0xC0, 10, 10, false);
        let webp_bytes = webp_file(b"VP8X", &vp8x(10, 10, 0));
        // Cut within the size fields.
        assert_eq!(png(&png_bytes[..20]), None);
        assert_eq!(gif(&gif_bytes[..8]), None);
        assert_eq!(jpeg(&jpeg_bytes[..jpeg_bytes.len() - 20]), None);
        assert_eq!(webp(&webp_bytes[..26]), None);
        // A first chunk other than IHDR; a zero side; a scan before any frame; a VP8L
        // without its signature byte; an unknown WebP chunk.
        let mut renamed = png_bytes.clone();
        renamed[12..16].copy_from_slice(b"IHDX");
        assert_eq!(png(&renamed), None);
        assert_eq!(png(&png_file(0, 10, None)), None);
        assert_eq!(jpeg(&[0xFF, 0xD8, 0xFF, 0xDA, 0, 2, 0xFF, 0xD9]), None);
        assert_eq!(jpeg(&[0xFF, 0xD8, 0x00, 0xC0]), None);
        let mut lossless = vp8l(10, 10);
        lossless[0] = 0;
        assert_eq!(webp(&webp_file(b"VP8L", &lossless)), None);
        assert_eq!(webp(&webp_file(b"ALPH", &[0; 10])), None);
        // A GIF cut after its first image is still one picture of its screen's size.
        assert_eq!(
            gif(&gif_file(10, 10, 2)[..40]),
            ImageHeader::sized(10, 10, false)
        );
        // The signature alone is still an image, of unknown size.
        let bare = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        assert_eq!((bare.dimensions(), bare.is_animated()), (None, false));
    }

    #[test]
    fn headers_that_stretch_the_format_read_as_they_say() {
        // A side past PNG's 2^31 - 1: the size said, for the limits to refuse.
        assert_eq!(
            read("image/png", &png_file(1 << 31, u32::MAX, None)),
            (Some((1 << 31, u32::MAX)), false)
        );
        // An `acTL` after the first `IDAT` is not read by a decoder: one picture.
        let mut late = png_file(8, 8, None);
        let iend = late.len() - 12;
        late.splice(iend..iend, chunk(b"acTL", &[0, 0, 0, 5, 0, 0, 0, 0]));
        assert_eq!(read("image/png", &late), (Some((8, 8)), false));
        // A GIF of no image at all, and one whose first image's data is cut off: a screen
        // of its size, not animated.
        assert_eq!(
            read("image/gif", &gif_file(30, 20, 0)),
            (Some((30, 20)), false)
        );
        let cut = gif_file(30, 20, 2);
        assert_eq!(read("image/gif", &cut[..33]), (Some((30, 20)), false));
        // A JPEG whose segments end before any frame: no size.
        assert_eq!(
            read(
                "image/jpeg",
                &[0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0, 0xFF, 0xD9]
            )
            .0,
            None
        );
        // A WebP `VP8X` cut within its canvas size: no size.
        let extended = webp_file(b"VP8X", &vp8x(300, 200, 0x02));
        assert_eq!(read("image/webp", &extended[..27]), (None, false));
    }

    proptest! {
        /// Any bytes behind any type's signature: read without a panic, by the reader and
        /// by `Image` (which takes them, of whatever size the header says, or none).
        #[test]
        fn any_bytes_behind_a_signature_never_panic(
            kind in 0usize..4,
            rest in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            let (media_type, signature): (&str, &[u8]) = [
                ("image/png", b"\x89PNG\r\n\x1a\n".as_slice()),
                ("image/jpeg", b"\xFF\xD8\xFF".as_slice()),
                ("image/gif", b"GIF89a".as_slice()),
                ("image/webp", b"RIFF\0\0\0\0WEBP".as_slice()),
            ][kind];
            let mut bytes = signature.to_vec();
            bytes.extend_from_slice(&rest);
            let image = Image::from_bytes(media_type, &bytes).unwrap();
            if let Some((width, height)) = image.dimensions() {
                prop_assert!(width > 0 && height > 0);
            }
            let _ = image.is_animated();
        }

        /// Bytes shaped as each reader's structures (chunk and segment headers with any
        /// lengths) behind a valid header start: never a panic.
        #[test]
        fn structured_noise_never_panics(
            lengths in proptest::collection::vec(any::<u32>(), 0..8),
            fill in any::<u8>(),
        ) {
            let mut png_bytes = png_file(5, 5, None)[..33].to_vec();
            let mut jpeg_bytes = vec![0xFF, 0xD8];
            let mut gif_bytes = gif_file(5, 5, 0);
            gif_bytes.pop();
            for len in &lengths {
                png_bytes.extend_from_slice(&len.to_be_bytes());
                png_bytes.extend_from_slice(b"tEXt");
                png_bytes.push(fill);
                jpeg_bytes.extend_from_slice(&[0xFF, fill]);
                jpeg_bytes.extend_from_slice(&len.to_be_bytes()[2..]);
                gif_bytes.extend_from_slice(&[0x21, fill, len.to_le_bytes()[0]]);
            }
            let _ = (png(&png_bytes), jpeg(&jpeg_bytes), gif(&gif_bytes));
        }
    }
}
