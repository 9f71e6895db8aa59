"""stepgate's Gradio UI: build_app() assembles one module per panel."""
