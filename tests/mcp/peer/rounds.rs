//! A client on 2026-07-28, asked in input rounds: the sealed state, the
//! answers it carries, and what is refused.

use super::*;

/// A 2026-07-28 `tools/call` of `ask` with these extra params.
fn round(id: usize, capabilities: Value, extra: Value) -> Value {
    let mut params = json!({
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}
        },
        "name": "ask",
    });
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

#[tokio::test]
async fn a_client_on_2026_07_28_is_asked_in_input_rounds_and_the_tool_gets_its_answer() {
    let mut wire = Wire::at_on("2026-07-28", server()).await;
    let caps = json!({"sampling": {}, "elicitation": {"form": {}}});
    let arguments = json!({"ask": "sample", "text": "hi"});
    // Round 1: nothing is sent to the client during the call; the answer
    // is an input_required result asking it, with a sealed state.
    let first = wire
        .request(round(1, caps.clone(), json!({"arguments": arguments})))
        .await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let question = &result["inputRequests"]["sample-1"];
    assert_eq!(question["method"], "sampling/createMessage", "{first}");
    assert_eq!(question["params"]["messages"][0]["content"]["text"], "hi");
    let state = result["requestState"].as_str().unwrap().to_owned();
    // Round 2: the answer and the state: the tool gets the answer.
    let answer = json!({"sample-1": {"role": "assistant", "model": "m",
        "content": {"type": "text", "text": "forty-two"}}});
    let answered = |id, state: &str| {
        let extra =
            json!({"arguments": arguments, "inputResponses": answer, "requestState": state});
        round(id, caps.clone(), extra)
    };
    let second = wire.request(answered(2, &state)).await;
    assert_eq!(second["result"]["isError"], false, "{second}");
    assert!(text(&second["result"]).contains("forty-two"), "{second}");
    // The same state again, tampered, or for other arguments: refused.
    let replay = wire.request(answered(3, &state)).await;
    assert_eq!(replay["error"]["code"], -32602, "{replay}");
    let mut tampered = state.clone();
    tampered.replace_range(10..11, if &state[10..11] == "A" { "B" } else { "A" });
    let bad = wire.request(answered(4, &tampered)).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    // An elicitation answer outside its form is refused, the tool told why.
    let elicit = json!({"ask": "elicit", "text": "hi"});
    let asked = wire
        .request(round(5, caps.clone(), json!({"arguments": elicit})))
        .await;
    let key = asked["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let form = &asked["result"]["inputRequests"][&key]["params"]["requestedSchema"];
    let mut wrong = serde_json::Map::new();
    for (name, field) in form["properties"].as_object().unwrap() {
        // The wrong type for every field.
        let value = if field["type"] == "string" {
            json!(5)
        } else {
            json!("five")
        };
        wrong.insert(name.clone(), value);
    }
    let answered = wire
        .request(round(
            6,
            caps.clone(),
            json!({
                "arguments": elicit,
                "inputResponses": {key: {"action": "accept", "content": wrong}},
                "requestState": state,
            }),
        ))
        .await;
    assert_eq!(answered["result"]["isError"], true, "{answered}");
    assert!(
        text(&answered["result"]).contains("does not fit the form"),
        "{answered}"
    );
    // A client that did not declare sampling: -32021, naming it.
    let missing = wire
        .request(round(7, json!({}), json!({"arguments": arguments})))
        .await;
    assert_eq!(missing["error"]["code"], -32021, "{missing}");
    assert_eq!(
        missing["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
}
