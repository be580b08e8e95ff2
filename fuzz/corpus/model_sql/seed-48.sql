SELECT
    category,
    sum(line_total) AS revenue,
    max(line_total) AS largest_line
FROM ref('order_lines')
GROUP BY category
