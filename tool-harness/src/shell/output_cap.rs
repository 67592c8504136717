//! [`HeadTailBuffer`]: keeps the start and the end of an output too long to keep whole.

use std::collections::VecDeque;

/// A byte buffer that keeps at most `head` bytes from the start and `tail` bytes from the end
/// of what is pushed into it, and counts what it drops in between. A UTF-8 character cut in
/// two at an edge of the cut goes with the cut, whole.
///
/// ```
/// use toolsmith::harness::HeadTailBuffer;
///
/// let mut buffer = HeadTailBuffer::new(4, 4);
/// buffer.push(b"0123456789\nabcdef");
/// assert_eq!(buffer.cut_bytes(), 9);
/// assert_eq!(buffer.render(), "0123\n[… 9 bytes (1 line break) cut …]\ncdef");
/// ```
#[derive(Debug, Clone)]
pub struct HeadTailBuffer {
    head_limit: usize,
    tail_limit: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    cut_bytes: u64,
    cut_newlines: u64,
}

impl HeadTailBuffer {
    /// A buffer keeping `head` leading and `tail` trailing bytes.
    pub fn new(head: usize, tail: usize) -> Self {
        Self {
            head_limit: head,
            tail_limit: tail,
            head: Vec::new(),
            tail: VecDeque::new(),
            cut_bytes: 0,
            cut_newlines: 0,
        }
    }

    /// Appends output.
    pub fn push(&mut self, mut bytes: &[u8]) {
        let room = self.head_limit - self.head.len();
        if room > 0 {
            let taken = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..taken]);
            bytes = &bytes[taken..];
        }
        if bytes.is_empty() {
            return;
        }
        // Whatever cannot stay in the tail is cut, oldest first.
        if bytes.len() > self.tail_limit {
            let dropped = &bytes[..bytes.len() - self.tail_limit];
            self.count_cut(dropped);
            bytes = &bytes[bytes.len() - self.tail_limit..];
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_limit);
        if overflow > 0 {
            let dropped: Vec<u8> = self.tail.drain(..overflow).collect();
            self.count_cut(&dropped);
        }
        self.tail.extend(bytes);
    }

    fn count_cut(&mut self, dropped: &[u8]) {
        self.cut_bytes += dropped.len() as u64;
        self.cut_newlines += dropped.iter().filter(|&&b| b == b'\n').count() as u64;
    }

    /// The number of bytes dropped from the middle.
    pub fn cut_bytes(&self) -> u64 {
        let (head_end, tail_start) = self.kept_bounds();
        self.cut_bytes + (self.head.len() - head_end + tail_start) as u64
    }

    /// Where the head's kept bytes end and the tail's begin: when the middle was cut, the
    /// piece of a character the cut split is left out of the head's end and the tail's start
    /// (a piece alone would show as U+FFFD).
    fn kept_bounds(&self) -> (usize, usize) {
        if self.cut_bytes == 0 {
            return (self.head.len(), 0);
        }
        // The head's last character, when its bytes run out before its lead byte says.
        let mut head_end = self.head.len();
        for back in 1..=self.head.len().min(3) {
            let byte = self.head[self.head.len() - back];
            if !is_continuation(byte) {
                let width = match byte {
                    0xC0..=0xDF => 2,
                    0xE0..=0xEF => 3,
                    0xF0..=0xF7 => 4,
                    _ => 1,
                };
                if width > back {
                    head_end -= back;
                }
                break;
            }
        }
        // The tail's first bytes, when they continue a character that began in the cut.
        let tail_start = self
            .tail
            .iter()
            .take(3)
            .take_while(|&&byte| is_continuation(byte))
            .count();
        (head_end, tail_start)
    }

    /// The number of bytes pushed in all.
    pub fn total_bytes(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64 + self.cut_bytes
    }

    /// The kept output as text (undecodable bytes as U+FFFD), with a marker where the middle
    /// was cut saying how much.
    pub fn render(&self) -> String {
        let (head_end, tail_start) = self.kept_bounds();
        let (front, back) = self.tail.as_slices();
        let mut tail = Vec::with_capacity(self.tail.len());
        tail.extend_from_slice(front);
        tail.extend_from_slice(back);
        if self.cut_bytes == 0 {
            // Head and tail are one run of output: a character may span the two.
            let mut whole = self.head.clone();
            whole.extend_from_slice(&tail);
            return String::from_utf8_lossy(&whole).into_owned();
        }
        let mut text = String::from_utf8_lossy(&self.head[..head_end]).into_owned();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[… {} bytes ({} line break{}) cut …]\n",
            self.cut_bytes(),
            self.cut_newlines,
            if self.cut_newlines == 1 { "" } else { "s" }
        ));
        text.push_str(&String::from_utf8_lossy(&tail[tail_start..]));
        text
    }
}

/// Whether `byte` continues a UTF-8 character (`10xxxxxx`) rather than beginning one.
fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let mut buffer = HeadTailBuffer::new(8, 8);
        buffer.push(b"hello ");
        buffer.push(b"world");
        assert_eq!(buffer.render(), "hello world");
        assert_eq!(buffer.cut_bytes(), 0);
        assert_eq!(buffer.total_bytes(), 11);
    }

    #[test]
    fn long_output_keeps_head_and_tail_across_pushes() {
        let mut buffer = HeadTailBuffer::new(3, 3);
        for chunk in [&b"ab"[..], b"cdef", b"g\nh", b"ij"] {
            buffer.push(chunk);
        }
        // "abcdefg\nhij": head "abc", tail "hij", cut "defg\n".
        assert_eq!(buffer.cut_bytes(), 5);
        assert_eq!(buffer.total_bytes(), 11);
        assert_eq!(
            buffer.render(),
            "abc\n[… 5 bytes (1 line break) cut …]\nhij"
        );
    }

    #[test]
    fn a_character_is_never_cut_in_two() {
        // Not cut at all: a character across the head's end is decoded whole.
        let mut buffer = HeadTailBuffer::new(4, 4);
        buffer.push("abc€".as_bytes());
        assert_eq!(buffer.render(), "abc€");
        assert_eq!(buffer.cut_bytes(), 0);

        // Cut: the pieces of the characters at the cut's edges go with the cut (€ is 3 bytes:
        // head "abc" + 1 byte of one, tail 2 bytes of another + "xyz").
        let mut buffer = HeadTailBuffer::new(4, 5);
        for chunk in ["ab", "c€€", "€€xyz"] {
            buffer.push(chunk.as_bytes());
        }
        assert_eq!(
            buffer.render(),
            "abc\n[… 12 bytes (0 line breaks) cut …]\nxyz"
        );
        assert_eq!(buffer.cut_bytes(), 12);
        assert_eq!(buffer.total_bytes(), 18);

        // Bytes that were never UTF-8 stay as they were.
        let mut buffer = HeadTailBuffer::new(2, 2);
        buffer.push(b"\xffa----b\xff");
        assert_eq!(
            buffer.render(),
            "\u{fffd}a\n[… 4 bytes (0 line breaks) cut …]\nb\u{fffd}"
        );
    }
}
