SELECT
    id,
    qty + 1 AS qty_plus_one,
    qty + big AS qty_plus_big,
    big - qty AS big_minus_qty,
    qty * 3 AS qty_times_three,
    big / qty AS big_div_qty,
    big % 3 AS big_mod_three,
    price * qty AS line_total,
    price / 2 AS half_price,
    price + 0.25 AS price_plus_quarter,
    fee - price AS fee_minus_price,
    ratio * 2 AS double_ratio,
    ratio + price AS ratio_plus_price,
    -qty AS neg_qty,
    -price AS neg_price
FROM source('events')
