SELECT
    customer_id,
    SUM(total_spend) AS grand_total
FROM ref('customer_metrics')
GROUP BY customer_id
