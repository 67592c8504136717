//! Lexical tool search: an inverted index over tool fields, ranked with BM25F.

mod analyzer;
mod index;
mod params;
mod small_str;
mod stop_words;
#[cfg(test)]
mod test_words;
mod text_index;

pub(crate) use analyzer::analyze;
pub(crate) use index::{LexicalHit, LexicalIndex};
pub use text_index::{TextHit, TextIndex};

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::index::LexicalIndex;
    use super::params::Bm25fParams;
    use super::test_words::text;
    use crate::{Args, Tool, ToolDefinition};

    fn tool(name: &str, description: &str, params: &[(&str, &str)]) -> Tool {
        let properties: serde_json::Map<String, serde_json::Value> = params
            .iter()
            .map(|(n, d)| ((*n).to_owned(), json!({"type": "string", "description": d})))
            .collect();
        Tool::SingleCommand(ToolDefinition::new(
            name,
            description,
            Args::new(json!({"type": "object", "properties": properties})),
        ))
    }

    fn names(index: &LexicalIndex, query: &str, limit: usize) -> Vec<String> {
        index
            .search(query, limit)
            .into_iter()
            .map(|h| h.name.to_string())
            .collect()
    }

    fn sample() -> LexicalIndex {
        let mut index = LexicalIndex::default();
        index.insert(&tool(
            "get_weather",
            "Current weather for a city.",
            &[("city", "City name")],
        ));
        index.insert(&tool(
            "readFile",
            "Read a file from disk.",
            &[("path", "Path of the file")],
        ));
        index.insert(&tool(
            "write-file",
            "Write text to a file.",
            &[("path", "Where to write"), ("text", "What to write")],
        ));
        index.insert(&tool(
            "send_email",
            "Send an email message.",
            &[("to", "Recipient address")],
        ));
        index
    }

    #[test]
    fn finds_tools_by_stemmed_split_words() {
        let index = sample();
        assert_eq!(
            names(&index, "what's the weather like in Paris", 5),
            ["get_weather"]
        );
        assert_eq!(names(&index, "reading files", 1), ["readFile"]);
        assert_eq!(names(&index, "emails", 5), ["send_email"]);
        assert!(names(&index, "the of and", 5).is_empty());
        assert!(names(&index, "", 5).is_empty());
        assert!(names(&index, "weather", 0).is_empty());
    }

    #[test]
    fn finds_a_thai_tool_by_one_word_of_its_description() {
        // Thai puts no space between words: the sentence was one term, found only whole.
        let mut index = sample();
        // "Convert currency at today's exchange rate." / "See the weather of a city."
        index.insert(&tool(
            "convert_currency",
            "แปลงสกุลเงินตามอัตราแลกเปลี่ยนปัจจุบัน",
            &[],
        ));
        index.insert(&tool("city_weather", "ดูสภาพอากาศของเมือง", &[]));
        // "money", "exchange", "weather".
        assert_eq!(names(&index, "เงิน", 5), ["convert_currency"]);
        assert_eq!(names(&index, "แลกเปลี่ยน", 5), ["convert_currency"]);
        assert_eq!(names(&index, "อากาศ", 5), ["city_weather"]);
        // "hotel" is in neither.
        assert!(names(&index, "โรงแรม", 5).is_empty());
    }

    #[test]
    fn finds_a_korean_tool_by_a_word_its_description_writes_with_a_particle() {
        // Korean writes a particle onto its word: "날씨를" (weather + object particle) was
        // one term, and the query "날씨" missed it.
        let mut index = sample();
        // "Tells the weather of Seoul." / "Books a hotel room."
        index.insert(&tool("seoul_weather", "서울의 날씨를 알려줍니다", &[]));
        index.insert(&tool("book_room", "호텔 객실을 예약합니다", &[]));
        assert_eq!(names(&index, "날씨", 5), ["seoul_weather"]);
        assert_eq!(names(&index, "서울", 5), ["seoul_weather"]);
        assert_eq!(names(&index, "객실", 5), ["book_room"]);
        // "money" is in neither.
        assert!(names(&index, "돈", 5).is_empty());
        assert!(names(&index, "환율", 5).is_empty());
    }

    #[test]
    fn finds_a_katakana_word_inside_a_longer_one() {
        // A run of katakana was one term: "データ" (data) missed "データベース" (database).
        let mut index = sample();
        // "Send a query to the database." / "Book a hotel room."
        index.insert(&tool("query_db", "データベースにクエリを送る", &[]));
        index.insert(&tool("book_room", "ホテルの部屋を予約する", &[]));
        assert_eq!(names(&index, "データ", 5), ["query_db"]);
        assert_eq!(names(&index, "クエリ", 5), ["query_db"]);
        assert_eq!(names(&index, "ホテル", 5), ["book_room"]);
        // "Server" is in neither.
        assert!(names(&index, "サーバー", 5).is_empty());
    }

    #[test]
    fn finds_a_chinese_tool_by_a_word_before_one_that_shares_its_letters() {
        // Each ideograph was a term: "天气" (weather) met "天然气" (natural gas) as well as it
        // met "天气", and the shorter description came first.
        let mut index = sample();
        // "Look up a city's weather forecast." / "Look up the price of natural gas." /
        // "Today's schedule."
        index.insert(&tool("city_forecast", "查询城市的天气预报", &[]));
        index.insert(&tool("gas_price", "查询天然气价格", &[]));
        index.insert(&tool("today_schedule", "今天的日程", &[]));
        assert_eq!(names(&index, "天气", 1), ["city_forecast"]);
        assert_eq!(names(&index, "天然气", 1), ["gas_price"]);
        assert_eq!(names(&index, "今天", 1), ["today_schedule"]);
        // A query of one ideograph still meets it inside a word.
        assert_eq!(names(&index, "程", 5), ["today_schedule"]);
    }

    #[test]
    fn finds_a_greek_tool_by_a_query_in_capitals() {
        // Capitals are written without accents and with no final sigma: "ΝΟΜΙΣΜΑΤΟΣ" did
        // not meet "νομίσματος".
        let mut index = sample();
        // "Currency conversion." / "Weather forecast."
        index.insert(&tool("greek_currency", "Μετατροπή νομίσματος", &[]));
        index.insert(&tool("greek_weather", "Πρόγνωση καιρού", &[]));
        assert_eq!(names(&index, "ΝΟΜΙΣΜΑΤΟΣ", 5), ["greek_currency"]);
        assert_eq!(names(&index, "ΚΑΙΡΟΥ", 5), ["greek_weather"]);
        assert!(names(&index, "ΞΕΝΟΔΟΧΕΙΟ", 5).is_empty());
    }

    #[test]
    fn a_word_in_the_name_outweighs_one_in_an_argument_description() {
        let mut index = LexicalIndex::default();
        index.insert(&tool(
            "convert_units",
            "Convert a value.",
            &[("unit", "A unit, like a meter or a file size")],
        ));
        index.insert(&tool(
            "file_info",
            "Describe something.",
            &[("target", "The thing")],
        ));
        assert_eq!(names(&index, "file", 2), ["file_info", "convert_units"]);
    }

    #[test]
    fn ties_are_broken_by_name() {
        let mut index = LexicalIndex::default();
        for name in ["zeta_tool", "alpha_tool", "mid_tool"] {
            index.insert(&tool(name, "Does the same thing.", &[]));
        }
        assert_eq!(
            names(&index, "same thing", 5),
            ["alpha_tool", "mid_tool", "zeta_tool"]
        );
        assert_eq!(names(&index, "same thing", 2), ["alpha_tool", "mid_tool"]);
    }

    #[test]
    fn removal_takes_a_tool_and_its_unique_terms_out() {
        let mut index = sample();
        let vocabulary = index.vocabulary_len();
        assert!(index.remove("get_weather"));
        assert!(!index.remove("get_weather"));
        assert!(names(&index, "weather", 5).is_empty());
        assert!(index.vocabulary_len() < vocabulary);
        assert_eq!(index.len(), 3);
        index.insert(&tool("get_weather", "Forecast.", &[]));
        assert_eq!(names(&index, "forecast", 5), ["get_weather"]);
        assert!(names(&index, "city", 5).is_empty());
    }

    #[test]
    fn reinserting_a_name_replaces_the_tool() {
        let mut index = sample();
        index.insert(&tool("send_email", "Post a letter.", &[]));
        assert_eq!(index.len(), 4);
        assert!(names(&index, "email message", 5).contains(&"send_email".to_owned()));
        assert!(names(&index, "message", 5).is_empty());
        assert_eq!(names(&index, "letter", 5), ["send_email"]);
    }

    #[test]
    fn compaction_after_heavy_churn_keeps_results() {
        let mut index = LexicalIndex::default();
        for i in 0..3000 {
            index.insert(&tool(
                &format!("tool_{i}"),
                &format!("word{} common", i % 7),
                &[],
            ));
        }
        for i in 0..2900 {
            assert!(index.remove(&format!("tool_{i}")));
        }
        assert_eq!(index.len(), 100);
        let hits = names(&index, "common", 200);
        assert_eq!(hits.len(), 100);
        assert!(
            hits.iter()
                .all(|n| n["tool_".len()..].parse::<usize>().unwrap() >= 2900)
        );
        assert_eq!(names(&index, "tool 2950", 1), ["tool_2950"]);
    }

    #[test]
    fn impacts_follow_the_average_lengths_as_tools_arrive() {
        // Built one by one, with averages drifting all the way, the ranking must be that
        // of the same tools indexed when the averages are settled.
        let tools: Vec<Tool> = (0..200)
            .map(|i| {
                let padding = "lorem ".repeat(i % 17);
                tool(
                    &format!("tool_{i}"),
                    &format!("widget {padding} gadget{}", i % 5),
                    &[],
                )
            })
            .collect();
        let mut incremental = LexicalIndex::default();
        for t in &tools {
            incremental.insert(t);
        }
        let hits = incremental.search("widget gadget3", 10);
        assert_eq!(hits.len(), 10);
        assert!(hits.iter().all(|h| h.score.is_finite() && h.score > 0.0));
        assert!(hits[0].name.ends_with('3') || hits[0].name.ends_with('8'));
        let mut settled = LexicalIndex::default();
        for t in &tools {
            settled.insert(t);
        }
        settled.remove("tool_0");
        settled.insert(&tools[0]);
        assert_eq!(
            names(&incremental, "widget gadget3", 10),
            names(&settled, "widget gadget3", 10)
        );
        assert!(incremental.search("widget", usize::MAX).len() == 200);
    }

    proptest! {
        /// MaxScore pruning returns exactly what scoring every document would.
        #[test]
        fn pruned_search_equals_exhaustive_ranking(
            docs in prop::collection::vec(
                (prop::collection::vec(0usize..40, 1..4), prop::collection::vec(0usize..40, 0..12)),
                1..60),
            query in prop::collection::vec(0usize..40, 1..6),
            limit in 1usize..8,
        ) {
            let mut index: LexicalIndex = LexicalIndex::with_params(Bm25fParams::default());
            for (i, (name, description)) in docs.iter().enumerate() {
                index.insert(&tool(&format!("{}_{i}", text(name).replace(' ', "_")), &text(description), &[]));
            }
            let query = text(&query);
            let all = index.search(&query, docs.len());
            let top = index.search(&query, limit);
            prop_assert_eq!(&all[..limit.min(all.len())], &top[..]);
        }
    }
}
