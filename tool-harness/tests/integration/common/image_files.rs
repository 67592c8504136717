//! Minimal real image files built in the tests: headers that say a size in pixels (and a
//! GIF's frames), as `Image` reads them, without megabytes of pixels.

use toolsmith_core::Image;

/// A PNG chunk: length, type, data, a CRC (nothing here checks it).
fn chunk(file: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    file.extend_from_slice(&u32::try_from(data.len()).unwrap().to_be_bytes());
    file.extend_from_slice(kind);
    file.extend_from_slice(data);
    file.extend_from_slice(&[0; 4]);
}

/// A PNG whose header says `width` x `height`.
pub fn png(width: u32, height: u32) -> Image {
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut file = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut file, b"IHDR", &ihdr);
    chunk(&mut file, b"IDAT", &[0x78, 0x9C, 0x63, 0, 0, 0, 1, 0, 1]);
    chunk(&mut file, b"IEND", &[]);
    Image::from_bytes("image/png", &file).unwrap()
}

/// A GIF of 4 x 4 with `frames` images (more than one: animated).
pub fn gif(frames: usize) -> Image {
    let mut file = b"GIF89a\x04\0\x04\0\x80\0\0".to_vec();
    file.extend_from_slice(&[0, 0, 0, 0xFF, 0xFF, 0xFF]);
    for _ in 0..frames {
        file.extend_from_slice(&[0x21, 0xF9, 4, 0, 10, 0, 0, 0]);
        file.extend_from_slice(&[0x2C, 0, 0, 0, 0, 4, 0, 4, 0, 0]);
        file.extend_from_slice(&[2, 2, 0x4C, 0x01, 0]);
    }
    file.push(0x3B);
    Image::from_bytes("image/gif", &file).unwrap()
}

/// A tool `name` ("Take a screenshot.", no arguments) answering every call with `result`:
/// the screenshot tool of the image tests, each with its own picture and caption.
pub fn screenshot_tool(
    name: &'static str,
    result: toolsmith_core::ToolCallResult,
) -> toolsmith_core::FnTool {
    toolsmith_core::FnTool::new(
        name,
        "Take a screenshot.",
        toolsmith_core::Args::empty(),
        move |_: toolsmith_core::ToolArgs<'_>| {
            let result = result.clone();
            async move { Ok(result) }
        },
    )
}
