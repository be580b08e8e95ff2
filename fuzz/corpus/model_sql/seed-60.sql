SELECT
    category,
    revenue
FROM ref('category_revenue')
WHERE revenue >= 50
