package jsonrpcio

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/segmentio/encoding/json"
)

// decodeFlags are the go-sdk's decoding rules: object keys match struct
// fields case-sensitively.
const decodeFlags = json.DontMatchCaseInsensitiveStructFields

// wireMessage is a message as it arrives: the go-sdk's jsonrpc2 wireDecode.
// Method stays raw so that a "method" key holding "" still makes a request.
type wireMessage struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// errInvalidRequest is the go-sdk's jsonrpc2.ErrInvalidRequest message:
// a response without an id.
var errInvalidRequest = errors.New("JSON RPC invalid request")

// Decode decodes one frame: a message, or a batch (a non-empty JSON array
// of messages) in order.
func Decode(frame []byte) (msgs []jsonrpc.Message, batch bool, err error) {
	if b := bytes.TrimLeft(frame, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		var raws []json.RawMessage
		if err := parse(b, &raws); err != nil {
			return nil, true, fmt.Errorf("unmarshaling jsonrpc batch: %w", err)
		}
		if len(raws) == 0 {
			return nil, true, fmt.Errorf("empty batch")
		}
		msgs = make([]jsonrpc.Message, 0, len(raws))
		for _, raw := range raws {
			m, err := DecodeMessage(raw)
			if err != nil {
				return nil, true, err
			}
			msgs = append(msgs, m)
		}
		return msgs, true, nil
	}
	m, err := DecodeMessage(frame)
	if err != nil {
		return nil, false, err
	}
	return []jsonrpc.Message{m}, false, nil
}

// DecodeMessage decodes one JSON-RPC message as the go-sdk's
// jsonrpc.DecodeMessage does, without its per-call decoder.
func DecodeMessage(data []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if err := parse(data, &w); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.VersionTag != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", w.VersionTag, "2.0")
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, err
	}
	if len(w.Method) > 0 {
		var method string
		if err := parse(w.Method, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, errInvalidRequest
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}

// parse decodes one JSON value filling all of data (white space around it
// aside) into v.
func parse(data []byte, v any) error {
	rest, err := json.Parse(data, v, decodeFlags)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	return nil
}

// Encode returns msg's wire form followed by a newline.
func Encode(msg jsonrpc.Message) ([]byte, error) {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, fmt.Errorf("marshaling message: %w", err)
	}
	return append(data, '\n'), nil
}
