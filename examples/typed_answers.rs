//! Typed answers: a run's answer read as a Rust type with `AgentSession::send_as`. The model
//! answers in its own words, then gives the answer as the arguments of a forced
//! `final_answer` tool whose schema is the type's (its doc comments are the fields'
//! descriptions). Its first try is wrong; the error sent back says what and where, and it
//! mends the answer.
//!
//! Run with `cargo run --example typed_answers`. The model is scripted, so the run is the
//! same every time.

use std::error::Error;
use std::io::Write;

use serde::Deserialize;
use serde_json::json;
use toolsmith::harness::agent::{AgentSession, TypedRun};
use toolsmith::harness::model::{Message, ScriptedModel, ScriptedTurn};

/// Tomorrow's weather in a city.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Forecast {
    /// The city.
    pub city: String,
    /// The highest temperature, in degrees Celsius.
    pub celsius: f64,
    /// The sky.
    pub sky: Sky,
    /// The chance of rain, in percent.
    #[schemars(range(min = 0, max = 100))]
    pub rain_percent: u8,
}

/// What the sky looks like.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sky {
    /// No clouds.
    Clear,
    /// Some clouds.
    Cloudy,
    /// Rain.
    Rainy,
}

#[tokio::main]
async fn main() {
    if let Err(error) = run(&mut std::io::stdout()).await {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

/// The whole example, writing what it shows to `out` (the tests read it from there).
pub async fn run(out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    let model = ScriptedModel::new([
        // The run's answer, in the model's words.
        ScriptedTurn::text("Tomorrow Lisbon gets 24 °C under a clear sky, 10 % chance of rain."),
        // The typed answer, wrong: a word where the schema asks for a number.
        ScriptedTurn::call(
            "final_answer",
            json!({"city": "Lisbon", "celsius": "warm", "sky": "clear", "rain_percent": 10}),
        ),
        // Mended, after being told what was wrong.
        ScriptedTurn::call(
            "final_answer",
            json!({"city": "Lisbon", "celsius": 24.0, "sky": "clear", "rain_percent": 10}),
        ),
    ]);
    // A clone shares the script and what was sent, to show the exchange afterwards.
    let session = AgentSession::builder(model.clone())
        .with_model("scripted")
        .build()?;

    let TypedRun { value, run } = session
        .send_as::<Forecast>("What is tomorrow's weather in Lisbon?")
        .await?;
    writeln!(out, "the model's words: {}", run.text)?;

    let requests = model.requests();
    if let Some(answer_tool) = requests
        .last()
        .and_then(|request| request.tools.iter().find(|t| t.name() == "final_answer"))
    {
        writeln!(
            out,
            "\n`final_answer` asks for:\n{}",
            serde_json::to_string_pretty(&answer_tool.function_spec().parameters)?
        )?;
    }
    // What the wrong answer got back: the result of its `final_answer` call, in the last
    // request the model received.
    let sent_back = requests
        .last()
        .into_iter()
        .flat_map(|request| &request.messages)
        .flat_map(Message::results)
        .map(|result| result.result.content.to_text());
    for error in sent_back {
        writeln!(out, "\nsent back to the model: {error}")?;
    }

    writeln!(
        out,
        "\nthe answer: {} tomorrow: {} °C, {:?}, {} % chance of rain",
        value.city, value.celsius, value.sky, value.rain_percent
    )?;
    writeln!(
        out,
        "{} model calls: the run's answer, then the typed answer's",
        run.model_calls
    )?;
    Ok(())
}
