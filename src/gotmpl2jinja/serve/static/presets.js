// The conversation presets: each a conversation of the contract's format (the JSON of
// Ollama's /api/chat request that reaches a template) and the host flags it sets.
"use strict";

const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the current weather in a city",
    parameters: {
      type: "object",
      required: ["city"],
      properties: {city: {type: "string", description: "The city's name"}},
    },
  },
};

const PRESETS = {
  "simple-chat": {
    conversation: {messages: [
      {role: "user", content: "Hello! Who are you?"},
      {role: "assistant", content: "I am a helpful assistant."},
      {role: "user", content: "Tell me a joke."},
    ]},
    flags: {},
  },
  "system-user": {
    conversation: {messages: [
      {role: "system", content: "You are a concise assistant."},
      {role: "user", content: "What is the capital of France?"},
    ]},
    flags: {},
  },
  "tool-round-trip": {
    conversation: {
      messages: [
        {role: "user", content: "What's the weather in Paris?"},
        {role: "assistant", content: "", tool_calls: [
          {function: {name: "get_weather", arguments: {city: "Paris"}}}]},
        {role: "tool", tool_name: "get_weather", content: "{\"temperature\": 18.5, \"sky\": \"clear\"}"},
        {role: "user", content: "Thanks! And should I take an umbrella?"},
      ],
      tools: [WEATHER_TOOL],
    },
    flags: {},
  },
  "thinking": {
    conversation: {messages: [
      {role: "user", content: "How many r's are in strawberry?"},
      {role: "assistant", thinking: "s-t-r-a-w-b-e-r-r-y: r at 3, 8 and 9.", content: "Three."},
      {role: "user", content: "And in raspberry?"},
    ]},
    flags: {think: "high"},
  },
  "prefill": {
    conversation: {messages: [
      {role: "user", content: "Write a haiku about the sea."},
      {role: "assistant", content: "Waves fold into foam"},
    ]},
    flags: {continue_final_message: true},
  },
  "fill-in-the-middle": {
    conversation: {prompt: "def add(a, b):\n    ", suffix: "\n\nprint(add(1, 2))\n"},
    flags: {},
  },
};
