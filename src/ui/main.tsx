import { render } from "preact";
import { App } from "./app.js";

const root = document.getElementById("app")!;
// The static "Loading…" line goes first: Preact renders beside what a container already holds.
root.textContent = "";
render(<App />, root);
