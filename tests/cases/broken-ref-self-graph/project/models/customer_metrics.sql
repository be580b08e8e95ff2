SELECT
    customer_id,
    SUM(total_spend) AS total_spend
FROM ref('customer_metrics')
GROUP BY customer_id
