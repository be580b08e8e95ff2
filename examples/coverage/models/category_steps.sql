-- Steps written as a WITH clause and a subquery in FROM: both lower into this model's own
-- nodes, the revenue per category of the priced lines, then the categories past 10.
WITH priced AS (
    SELECT category, price * qty AS line_revenue
    FROM source('events')
    WHERE category IS NOT NULL AND price IS NOT NULL
)
SELECT category, revenue
FROM (
    SELECT category, SUM(line_revenue) AS revenue, COUNT(*) AS lines
    FROM priced
    GROUP BY category
) AS per_category
WHERE revenue > 10
