//! Typed MCP messages (serde) for the client's own use and for Rust callers: what `initialize`
//! returns, tools, resources, prompts. Every struct keeps the members it does not name in
//! `extra`, so nothing a server sends is lost; callers that want no re-encoding at all use the
//! raw JSON methods of [`Client`](super::Client).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `{ name, version }` of a client or server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Other members (`title`, `icons`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Implementation {
    /// `{ name, version }`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            extra: Map::new(),
        }
    }
}

/// The answer to `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The protocol revision the server speaks.
    pub protocol_version: Option<String>,
    /// What the server supports (raw: capability shapes grow with every revision).
    #[serde(default)]
    pub capabilities: Map<String, Value>,
    /// Who the server is.
    pub server_info: Option<Implementation>,
    /// How to use it, for the model.
    pub instructions: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl InitializeResult {
    /// Whether the server declares capability `name` (present and not null).
    pub fn supports(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some_and(|v| !v.is_null())
    }
}

/// One tool of `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Its name on the server.
    pub name: String,
    /// What it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments, verbatim (SPEC 9.3: never rewritten).
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    /// Other members (`title`, `annotations`, `outputSchema`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn empty_object_schema() -> Value {
    serde_json::json!({ "type": "object" })
}

/// One page of `tools/list`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsPage {
    /// The tools of this page.
    #[serde(default)]
    pub tools: Vec<Tool>,
    /// The cursor of the next page (absent or empty: the last page).
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// One content item of a tool result or prompt message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64.
    Image {
        /// The data.
        data: String,
        /// Its MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64.
    Audio {
        /// The data.
        data: String,
        /// Its MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// An embedded resource.
    Resource {
        /// `{ uri, mimeType?, text?, blob? }`.
        resource: Value,
    },
    /// A link to a resource.
    ResourceLink {
        /// Its URI.
        uri: String,
        /// Other members.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// A content type this client does not know.
    #[serde(other)]
    Unknown,
}

/// The result of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// What the tool returned.
    #[serde(default)]
    pub content: Vec<Content>,
    /// The tool failed (reported, not thrown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Other members (`structuredContent`, `_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallToolResult {
    /// The text items, joined with blank lines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

/// One resource of `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    #[serde(default)]
    pub name: Option<String>,
    /// Its MIME type.
    #[serde(default)]
    pub mime_type: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One prompt of `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Its name.
    pub name: String,
    /// What it is for.
    #[serde(default)]
    pub description: Option<String>,
    /// Other members (`arguments`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_keep_what_they_do_not_name() {
        let tool: Tool = serde_json::from_str(
            r#"{"name":"t","inputSchema":{"type":"object","$defs":{"a":{}}},"annotations":{"x":1}}"#,
        )
        .unwrap();
        assert_eq!(tool.input_schema["$defs"], serde_json::json!({"a":{}}));
        assert_eq!(tool.extra["annotations"], serde_json::json!({"x":1}));
        let result: CallToolResult = serde_json::from_str(
            r#"{"content":[{"type":"text","text":"a"},{"type":"image","data":"d","mimeType":"image/png"},{"type":"new-kind"}],"isError":true,"structuredContent":{}}"#,
        )
        .unwrap();
        assert_eq!(result.text(), "a");
        assert_eq!(result.content[2], Content::Unknown);
        assert_eq!(result.is_error, Some(true));
        let init: InitializeResult = serde_json::from_str(
            r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"logging":null},"serverInfo":{"name":"s","version":"1","title":"S"}}"#,
        )
        .unwrap();
        assert!(init.supports("tools") && !init.supports("logging") && !init.supports("prompts"));
        assert_eq!(init.server_info.unwrap().extra["title"], "S");
    }
}
