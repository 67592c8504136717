//! The shed-first flow with a few hundred tools: the model is offered only `shed`, asks it
//! for what it needs, and the tools it returns are declared from then on.
//!
//! Run with `cargo run --example shed`.

use serde_json::json;
use toolsmith::shed::{ShedResult, ToolShed};
use toolsmith::{
    Args, FnTool, SessionParts, ToolArgs, ToolArguments, ToolCallRequest, ToolCallResult,
    ToolDeclarations, scheme,
};

/// What the tools act on, with the argument that names one.
const SUBJECTS: &[(&str, &str, &str)] = &[
    ("file", "a file on disk", "path"),
    ("invoice", "a customer invoice", "invoice_id"),
    (
        "calendar_event",
        "an event in the user's calendar",
        "event_id",
    ),
    ("email", "an email message", "message_id"),
    (
        "github_issue",
        "an issue in a GitHub repository",
        "issue_number",
    ),
    ("playlist", "a music playlist", "playlist_id"),
    ("flight_booking", "a flight reservation", "booking_ref"),
    (
        "weather_forecast",
        "the weather forecast for a place",
        "location",
    ),
    ("stock_quote", "a stock's market price", "ticker"),
    ("contact", "a person in the address book", "contact_id"),
    ("recipe", "a cooking recipe", "recipe_id"),
    ("support_ticket", "a customer support ticket", "ticket_id"),
    ("database_table", "a table of the SQL database", "table"),
    ("image", "an image file", "image_url"),
    ("shipment", "a parcel being delivered", "tracking_number"),
    (
        "translation",
        "a text translated into another language",
        "text",
    ),
    ("expense_report", "an employee expense report", "report_id"),
    ("smart_light", "a connected light bulb", "device_id"),
    ("news_article", "a news story", "article_id"),
    ("meeting_note", "notes taken in a meeting", "note_id"),
];

/// What the tools do, and how that reads in a description.
const ACTIONS: &[(&str, &str)] = &[
    ("get", "Fetch"),
    ("list", "List every"),
    ("create", "Create"),
    ("update", "Change the fields of"),
    ("delete", "Permanently delete"),
    ("search", "Search by keywords for"),
    ("export", "Export to CSV"),
    ("share", "Share with another user"),
    ("archive", "Move to the archive"),
    ("summarize", "Write a short summary of"),
    ("validate", "Check for errors in"),
    ("count", "Count the items of"),
    ("subscribe_to", "Get notified about changes to"),
    ("duplicate", "Make a copy of"),
    ("restore", "Bring back from the archive"),
];

fn shed_of_tools() -> ToolShed {
    let mut shed = ToolShed::new();
    for (subject, what, key) in SUBJECTS {
        for (action, does) in ACTIONS {
            let name = format!("{action}_{subject}");
            let answer = format!("{name}: done");
            shed = shed.tool(
                FnTool::new(
                    name,
                    format!("{does} {what}."),
                    Args::new(
                        scheme::object()
                            .required(
                                *key,
                                scheme::string().describe(format!("Identifies {what}.")),
                            )
                            .build(),
                    ),
                    move |_: ToolArgs<'_>| {
                        let answer = answer.clone();
                        async move { Ok(ToolCallResult::text(answer)) }
                    },
                )
                .with_category(subject.split('_').next().unwrap_or(subject)),
            );
        }
    }
    shed
}

fn show(title: &str, declared: &ToolDeclarations) {
    let names: Vec<&str> = declared.iter().map(|tool| tool.name()).collect();
    println!("{title}: {} declared {names:?}", declared.len());
}

#[tokio::main]
async fn main() {
    let shed = shed_of_tools();
    println!("the shed holds {} tools", shed.len());
    let manager = shed
        .build(SessionParts::in_memory("shed-example"))
        .expect("every tool builds");

    show("before", &manager.offered_tools());

    // The model's first move: describe the task to `shed`.
    let request = ToolCallRequest::new(
        "call-1",
        "shed",
        ToolArguments::try_from(json!({
            "description": "fetch the parcel being delivered to me",
            "limit": 3
        }))
        .expect("an object"),
    );
    println!("\nmodel -> shed {}", request.arguments);
    let result = manager.execute_one(&request).await.expect("shed runs");
    let found: ShedResult = serde_json::from_str(&result.content.to_text()).expect("a shed result");
    for tool in &found.tools {
        println!(
            "  found {:<24} {:<48} args {}",
            tool.name, tool.description, tool.arguments["properties"]
        );
    }
    println!();
    show("after", &manager.offered_tools());

    // An active tool can now be called; one that `shed` never returned is refused.
    let call = ToolCallRequest::new(
        "call-2",
        found.tools[0].name.clone(),
        ToolArguments::try_from(json!({"tracking_number": "1Z999"})).expect("an object"),
    );
    manager.check_offered(&call.name).expect("active");
    let answer = manager.execute_one(&call).await.expect("runs");
    println!("\nmodel -> {} -> {}", call.name, answer.content.to_text());
    match manager.check_offered("delete_invoice") {
        Ok(()) => println!("delete_invoice is active"),
        Err(err) => println!("model -> delete_invoice -> {err}"),
    }

    // A model that already knows names activates them exactly.
    let select = manager.shed("select:get_invoice,pay_invoice", None).await;
    println!(
        "\nselect:get_invoice,pay_invoice -> activated {:?}, unknown {:?}",
        select.tools.iter().map(|t| &t.name).collect::<Vec<_>>(),
        select.unknown
    );
    show("finally", &manager.offered_tools());
}
