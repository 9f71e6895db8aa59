"""Pure statistics and decisions for stepgate: agreement, consensus, scoring, reports."""
