package openai

import (
	"encoding/json"
	"strings"
)

// The chat completions wire format, as far as forge uses it: the request forge sends and the
// fields of the answer it reads. Unknown response fields are ignored.

type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens,omitempty"`            // other servers
	MaxCompletionTokens *int            `json:"max_completion_tokens,omitempty"` // api.openai.com
	Tools               []chatTool      `json:"tools,omitempty"`
	ToolChoice          *chatToolChoice `json:"tool_choice,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatTool struct {
	Type     string       `json:"type"` // "function"
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

type chatToolChoice struct {
	Type     string                 `json:"type"` // "function"
	Function chatToolChoiceFunction `json:"function"`
}

type chatToolChoiceFunction struct {
	Name string `json:"name"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   content `json:"content"`
			Refusal   string  `json:"refusal"`
			ToolCalls []struct {
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			FunctionCall *struct {
				Arguments string `json:"arguments"`
			} `json:"function_call"` // the deprecated single function call some servers still send
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// content is a message's content: a string, null, or (from some compatible servers) a list of
// parts whose text parts are joined.
type content string

func (c content) text() string { return string(c) }

func (c *content) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err == nil {
		if s != nil {
			*c = content(*s)
		}
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			texts = append(texts, p.Text)
		}
	}
	*c = content(strings.Join(texts, ""))
	return nil
}

// errorMessage reads the message of an error response: OpenAI's {"error": {"message": ...}},
// a bare {"error": "..."} or a top-level {"message": ...} as some compatible servers send; ""
// when the body says nothing readable (an HTML page from a proxy).
func errorMessage(body []byte) string {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &env) != nil {
		return ""
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(env.Error, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	var s string
	if json.Unmarshal(env.Error, &s) == nil && s != "" {
		return s
	}
	return env.Message
}
