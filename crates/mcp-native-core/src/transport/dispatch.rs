//! What every transport does with one incoming message, the same way (SPEC 3.1): an answer is
//! handed back for the transport to settle; a notification becomes an event; a server→client
//! request is answered (`ping` → `{}`, `-32601` when nobody listens) or handed to the listener.

use serde_json::value::RawValue;

use super::{Event, Outcome};
use crate::error::Error;
use crate::jsonrpc::{self, Incoming};

/// Handles one JSON value; returns the answer it carries (our request id and its outcome), if
/// it is one of ours. Replies to the server are pushed to `replies`, events to `events`.
pub(crate) fn dispatch(
    text: &[u8],
    requests_wanted: bool,
    replies: &mut Vec<Vec<u8>>,
    events: &mut Vec<Event>,
) -> Option<(u64, Outcome)> {
    let repaired;
    let mut incoming = jsonrpc::classify(text);
    if matches!(incoming, Incoming::Malformed)
        && let Some(text) = repair(text)
    {
        repaired = text;
        incoming = jsonrpc::classify(repaired.as_bytes());
    }
    let (id, outcome) = dispatch_incoming(incoming, requests_wanted, replies, events)?;
    Some((id, outcome.map(|result| result.map(RawValue::to_owned))))
}

/// [`dispatch`] of a message already classified; the result it returns is borrowed from the
/// message's text.
pub(crate) fn dispatch_incoming<'a>(
    incoming: Incoming<'a>,
    requests_wanted: bool,
    replies: &mut Vec<Vec<u8>>,
    events: &mut Vec<Event>,
) -> Option<(u64, Result<Option<&'a RawValue>, Error>)> {
    match incoming {
        Incoming::Response { id, outcome } => {
            let id = jsonrpc::our_id(id)?;
            Some((id, outcome.map_err(Error::rpc)))
        }
        Incoming::Notification { method, params } => {
            events.push(Event::Notification {
                method,
                params: params.map(RawValue::to_owned),
            });
            None
        }
        Incoming::Request { id, method, params } => {
            if method == "ping" {
                replies.push(jsonrpc::reply_frame(id.get(), Ok("{}")));
            } else if requests_wanted {
                events.push(Event::Request {
                    id: id.to_owned(),
                    method,
                    params: params.map(RawValue::to_owned),
                });
            } else {
                replies.push(jsonrpc::reply_frame(
                    id.get(),
                    Err(jsonrpc::METHOD_NOT_FOUND),
                ));
            }
            None
        }
        Incoming::Ignored | Incoming::Malformed => None,
    }
}

/// A message that did not parse, read as the reference reads a stdout line (a UTF-8 string,
/// `trim()`med, then `JSON.parse`): invalid UTF-8 becomes U+FFFD, and a byte-order mark or other
/// Unicode white space around it goes. `None` when that changes nothing. Only malformed messages
/// come here, so well-formed ones pay nothing for it.
fn repair(text: &[u8]) -> Option<String> {
    let lossy = String::from_utf8_lossy(text);
    let trimmed = lossy.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    let changed = matches!(lossy, std::borrow::Cow::Owned(_)) || trimmed.len() != text.len();
    changed.then(|| trimmed.to_owned())
}

/// Each JSON value of one SSE data payload (a server may put several in one event); a payload
/// that is not JSON stops there, like a malformed stdio line.
pub(crate) fn each_value(data: &[u8], mut f: impl FnMut(&[u8])) {
    let mut stream = serde_json::Deserializer::from_slice(data).into_iter::<&RawValue>();
    while let Some(Ok(value)) = stream.next() {
        f(value.get().as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_lines_are_read_as_the_reference_reads_them() {
        let mut replies = Vec::new();
        let mut events = Vec::new();
        // A byte-order mark (as .NET writes one) and no-break spaces around the message.
        let bom = "\u{feff}\u{a0}{\"jsonrpc\":\"2.0\",\"id\":\"10000000005\",\"result\":{}}\u{a0}";
        let got = dispatch(bom.as_bytes(), false, &mut replies, &mut events);
        assert_eq!(got.map(|(id, _)| id), Some(5));
        // Invalid UTF-8 in a string: U+FFFD, as a JavaScript reader decodes it.
        let bad = b"{\"jsonrpc\":\"2.0\",\"id\":\"10000000006\",\"result\":\"a\xffb\"}";
        let (id, outcome) = dispatch(bad, false, &mut replies, &mut events).unwrap();
        assert_eq!(id, 6);
        assert_eq!(outcome.unwrap().unwrap().get(), "\"a\u{fffd}b\"");
        // Still garbage: dropped.
        assert!(dispatch(b"\xff\xfe not json", false, &mut replies, &mut events).is_none());
        assert!(replies.is_empty() && events.is_empty());
    }

    #[test]
    fn answers_events_and_replies() {
        let mut replies = Vec::new();
        let mut events = Vec::new();
        let got = dispatch(
            br#"{"jsonrpc":"2.0","id":"10000000007","result":{"a":1}}"#,
            false,
            &mut replies,
            &mut events,
        );
        assert_eq!(
            got.map(|(id, o)| (id, o.unwrap().unwrap().get().to_string())),
            Some((7, r#"{"a":1}"#.into()))
        );
        assert!(
            dispatch(
                br#"{"jsonrpc":"2.0","id":"x","result":1}"#,
                false,
                &mut replies,
                &mut events
            )
            .is_none()
        );
        let err = dispatch(
            br#"{"id":10000000008,"error":{"code":-1,"message":"m"}}"#,
            false,
            &mut replies,
            &mut events,
        );
        assert_eq!(err.unwrap().1.unwrap_err().to_string(), "MCP error -1: m");
        dispatch(
            br#"{"jsonrpc":"2.0","method":"n","params":{"p":1}}"#,
            false,
            &mut replies,
            &mut events,
        );
        dispatch(
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            true,
            &mut replies,
            &mut events,
        );
        dispatch(
            br#"{"jsonrpc":"2.0","id":2,"method":"x/y"}"#,
            false,
            &mut replies,
            &mut events,
        );
        dispatch(
            br#"{"jsonrpc":"2.0","id":3,"method":"x/y"}"#,
            true,
            &mut replies,
            &mut events,
        );
        let replies: Vec<String> = replies
            .into_iter()
            .map(|r| String::from_utf8(r).unwrap())
            .collect();
        assert_eq!(replies[0], "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        assert!(replies[1].contains("-32601"));
        assert!(matches!(&events[0], Event::Notification { method, .. } if method == "n"));
        assert!(matches!(&events[1], Event::Request { method, .. } if method == "x/y"));
        let mut seen = Vec::new();
        each_value(b"{\"a\":1} {\"b\":2}x{\"c\":3}", |v| seen.push(v.to_vec()));
        assert_eq!(seen.len(), 2);
    }
}
