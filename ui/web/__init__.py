"""The HTTP layer in front of Gradio: our login, sessions, and the checks every request meets.

Gradio's own login keeps tokens forever, hashes passwords on the event loop and lets its schema and
queue routes answer before login; so the app runs as our FastAPI app with Gradio mounted inside it
(server.py), a guard in front of every request (guard.py), sessions checked against the store on
each request (sessions.py) and a throttled login (login.py).
"""
