SELECT
    customer_id,
    amount * amount * amount AS amount_cubed
FROM source('orders')
