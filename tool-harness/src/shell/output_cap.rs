//! [`HeadTailBuffer`]: keeps the start and the end of an output too long to keep whole.

use std::collections::VecDeque;

/// A byte buffer that keeps at most `head` bytes from the start and `tail` bytes from the end
/// of what is pushed into it, and counts what it drops in between.
///
/// ```
/// use toolsmith_harness::HeadTailBuffer;
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
        self.cut_bytes
    }

    /// The number of bytes pushed in all.
    pub fn total_bytes(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64 + self.cut_bytes
    }

    /// The kept output as text (undecodable bytes as U+FFFD), with a marker where the middle
    /// was cut saying how much.
    pub fn render(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.cut_bytes > 0 {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[… {} bytes ({} line break{}) cut …]\n",
                self.cut_bytes,
                self.cut_newlines,
                if self.cut_newlines == 1 { "" } else { "s" }
            ));
        }
        let (front, back) = self.tail.as_slices();
        let mut tail = Vec::with_capacity(self.tail.len());
        tail.extend_from_slice(front);
        tail.extend_from_slice(back);
        text.push_str(&String::from_utf8_lossy(&tail));
        text
    }
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
}
