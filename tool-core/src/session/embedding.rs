//! [`Embedder`]: texts into vectors for similarity search, with the checks of what one returns
//! and the scaling to length 1 that every store of vectors shares.

use async_trait::async_trait;

use super::ServiceError;
use crate::tool::echo::cut_to;

/// Turns texts into vectors for similarity search.
#[async_trait]
pub trait Embedder: Send + Sync {
    /// One vector per text, each of [`dimensions`](Self::dimensions) numbers.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError>;

    /// The length of every vector this embedder returns.
    fn dimensions(&self) -> usize;
}

/// The most characters of a text a [`check_embeddings`] or [`check_finite_embeddings`]
/// error quotes: enough to tell which text it is, where the text may be a whole document.
const MAX_QUOTED_TEXT_CHARS: usize = 40;

/// Checks what an embedder returned for `texts` against what [`Embedder::embed`] promises:
/// one vector per text, each of `dimensions` numbers. A vector of another length would
/// match nothing (the text never found, the query finding nothing), so it is an error, not
/// a result. The error's service is `"embedder"`; it says how many vectors came back for
/// how many texts, or which text's vector (its place and how it begins) has how many
/// numbers for how many expected. Whether the numbers are finite is
/// [`check_finite_embeddings`]'s to check, for a store that would keep such a vector.
///
/// ```
/// use toolsmith::check_embeddings;
///
/// let texts = ["a cat".to_owned(), "a dog".to_owned()];
/// assert!(check_embeddings(&[vec![1.0, 0.0], vec![0.0, 1.0]], &texts, 2).is_ok());
/// let err = check_embeddings(&[vec![1.0, 0.0]], &texts, 2).unwrap_err();
/// assert_eq!(err.to_string(), "embedder: returned 1 vector for 2 texts");
/// let err = check_embeddings(&[vec![1.0, 0.0], vec![1.0]], &texts, 2).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "embedder: returned 1 number for text 1 (\"a dog\"), but its dimension is 2"
/// );
/// ```
pub fn check_embeddings(
    vectors: &[Vec<f32>],
    texts: &[String],
    dimensions: usize,
) -> Result<(), ServiceError> {
    let counted = |count: usize, what: &str| match count {
        1 => format!("1 {what}"),
        count => format!("{count} {what}s"),
    };
    if vectors.len() != texts.len() {
        return Err(ServiceError::new(
            "embedder",
            format_args!(
                "returned {} for {}",
                counted(vectors.len(), "vector"),
                counted(texts.len(), "text")
            ),
        ));
    }
    let Some((at, vector)) = vectors
        .iter()
        .enumerate()
        .find(|(_, vector)| vector.len() != dimensions)
    else {
        return Ok(());
    };
    Err(ServiceError::new(
        "embedder",
        format_args!(
            "returned {} for {}, but its dimension is {dimensions}",
            counted(vector.len(), "number"),
            which_text(texts, at)
        ),
    ))
}

/// Checks that every number of `vectors` (one for each of `texts`, as [`check_embeddings`]
/// checks) is finite. A NaN or an infinity makes a vector's length not a number: a store that
/// keeps the vector scaled to length 1 would have one that matches nothing, so it is an
/// error naming the text, the number and its place. (Tool discovery needs no such check: it
/// searches a tool whose vector is not finite by its words alone.)
///
/// ```
/// use toolsmith::check_finite_embeddings;
///
/// let texts = ["a cat".to_owned(), "a dog".to_owned()];
/// assert!(check_finite_embeddings(&[vec![1.0, 0.0], vec![0.0, 1.0]], &texts).is_ok());
/// let err = check_finite_embeddings(&[vec![1.0, 0.0], vec![f32::NAN, 1.0]], &texts).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "embedder: returned NaN as number 0 of the vector for text 1 (\"a dog\"): a vector's \
///      numbers must be finite"
/// );
/// ```
pub fn check_finite_embeddings(vectors: &[Vec<f32>], texts: &[String]) -> Result<(), ServiceError> {
    let not_finite = vectors.iter().enumerate().find_map(|(at, vector)| {
        let place = vector.iter().position(|number| !number.is_finite())?;
        Some((at, place, vector[place]))
    });
    let Some((at, place, number)) = not_finite else {
        return Ok(());
    };
    Err(ServiceError::new(
        "embedder",
        format_args!(
            "returned {number} as number {place} of the vector for {}: a vector's numbers \
             must be finite",
            which_text(texts, at)
        ),
    ))
}

/// `vector` scaled to length 1, for similarity by dot product; `None` when it has no
/// direction (every number zero) or a number is not finite.
///
/// The length is summed in `f64`: in `f32` the squares of numbers past about 1.8e19 add up to
/// infinity and those below about 1e-19 to zero, and either way a vector of finite numbers
/// that has a direction would match nothing.
///
/// ```
/// use toolsmith::unit_vector;
///
/// assert_eq!(unit_vector(vec![3.0, 4.0]).as_deref(), Some(&[0.6, 0.8][..]));
/// // Numbers whose squares `f32` cannot hold keep their direction.
/// let huge = 2f32.powi(100);
/// assert_eq!(unit_vector(vec![3.0 * huge, 4.0 * huge]).as_deref(), Some(&[0.6, 0.8][..]));
/// assert_eq!(unit_vector(vec![0.0, 0.0]), None);
/// assert_eq!(unit_vector(vec![f32::NAN, 1.0]), None);
/// ```
pub fn unit_vector(mut vector: Vec<f32>) -> Option<Box<[f32]>> {
    let length = vector
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if !(length.is_finite() && length > 0.0) {
        return None;
    }
    for x in &mut vector {
        // Each quotient is at most 1 in size: back in `f32` without overflow.
        *x = (f64::from(*x) / length) as f32;
    }
    Some(vector.into_boxed_slice())
}

/// Text `at` of `texts` as an embedding check's error names it: how it begins, quoted, and
/// its place when there are several.
fn which_text(texts: &[String], at: usize) -> String {
    let quoted = match texts.get(at) {
        Some(text) => format!("{:?}", cut_to(text, MAX_QUOTED_TEXT_CHARS)),
        None => return format!("vector {at}"),
    };
    match texts.len() {
        1 => quoted,
        _ => format!("text {at} ({quoted})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_embedder_s_answer_is_checked_against_its_texts() {
        let one = ["where is the cat".to_owned()];
        assert!(check_embeddings(&[vec![0.0; 3]], &one, 3).is_ok());
        assert!(check_embeddings(&[], &[], 3).is_ok());
        // No vector for a text: counted, not indexed out of bounds.
        let err = check_embeddings(&[], &one, 3).unwrap_err();
        assert_eq!(
            (err.service.as_str(), err.reason.as_str()),
            ("embedder", "returned 0 vectors for 1 text")
        );
        let err = check_embeddings(&[vec![0.0; 3], vec![0.0; 3]], &one, 3).unwrap_err();
        assert_eq!(err.reason, "returned 2 vectors for 1 text");
        // A lone text is named by what it says; one of several by its place too.
        let err = check_embeddings(&[vec![0.0; 4]], &one, 3).unwrap_err();
        assert_eq!(
            err.reason,
            "returned 4 numbers for \"where is the cat\", but its dimension is 3"
        );
        let long = format!("{}\"", "é".repeat(1_000));
        let texts = [String::new(), long];
        let err = check_embeddings(&[vec![0.0; 3], Vec::new()], &texts, 3).unwrap_err();
        assert_eq!(
            err.reason,
            format!(
                "returned 0 numbers for text 1 (\"{}…\"), but its dimension is 3",
                "é".repeat(MAX_QUOTED_TEXT_CHARS)
            )
        );
    }

    #[test]
    fn a_unit_vector_keeps_the_direction_of_tiny_and_huge_numbers() {
        let length = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        for scale in [1e-30_f32, 1e-20, 1.0, 1e20, 1e30, f32::MAX / 2.0] {
            let unit = unit_vector(vec![0.6 * scale, 0.8 * scale, 0.0])
                .unwrap_or_else(|| panic!("no direction at scale {scale}"));
            assert!(
                (unit[0] - 0.6).abs() < 1e-6 && (unit[1] - 0.8).abs() < 1e-6,
                "{unit:?}"
            );
            assert!((length(&unit) - 1.0).abs() < 1e-6);
        }
        // The smallest positive number alone still points somewhere.
        assert_eq!(
            unit_vector(vec![0.0, f32::from_bits(1)]).as_deref(),
            Some(&[0.0, 1.0][..])
        );
        assert_eq!(unit_vector(Vec::new()), None);
        assert_eq!(unit_vector(vec![0.0; 4]), None);
        assert_eq!(unit_vector(vec![f32::INFINITY, 1.0]), None);
        assert_eq!(unit_vector(vec![1.0, f32::NAN]), None);
    }
}
